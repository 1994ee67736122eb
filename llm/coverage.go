package llm

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
)

// CoverageFit is a coverage judgement fitted for an embedding model's
// distances: the weights of a logistic model over named features of a
// question's retrieval and the probabilities that part covered, thin and
// silent (rag.CoverageModel is the same, as the pipeline runs it). Each
// was fitted with devtools/cmd/coverage-fit on features that `vaultask
// eval web-trigger --features` wrote for the help, hub and demo question
// sets (scripts/fit-coverage.sh), and is shipped as data in coverage/.
type CoverageFit struct {
	Name     string    `json:"name"`
	Features []string  `json:"features"`
	Mean     []float64 `json:"mean"`
	Scale    []float64 `json:"scale"`
	Weights  []float64 `json:"weights"`
	Bias     float64   `json:"bias"`
	Thin     float64   `json:"thin"`
	Silent   float64   `json:"silent"`
	Grey     float64   `json:"grey"`
	// Fitted says what it was fitted on and how it measured, for people.
	Fitted string `json:"fitted"`
}

//go:embed coverage/*.json
var coverageFiles embed.FS

// coverageFit reads the fit in coverage/name.json; the files are part of
// the binary, so a missing or malformed one is a build mistake that the
// tests catch.
func coverageFit(name string) CoverageFit {
	data, err := coverageFiles.ReadFile(path.Join("coverage", name+".json"))
	if err != nil {
		panic(fmt.Sprintf("llm: coverage fit %s: %v", name, err))
	}
	var f CoverageFit
	if err := json.Unmarshal(data, &f); err != nil {
		panic(fmt.Sprintf("llm: coverage fit %s: %v", name, err))
	}
	return f
}

// EmbeddingCoverage returns the coverage fit of the embedding model with
// id, and true; for a model without one of its own, the fallback fit, which
// reads no distance (models spread theirs on scales of their own), fitted
// on the built-in models' features together, and false.
func EmbeddingCoverage(id string) (CoverageFit, bool) {
	if m, ok := KnownEmbeddingModel(id); ok && m.Coverage != "" {
		return coverageFit(m.Coverage), true
	}
	return coverageFit("fallback"), false
}

// FullTextCoverage returns the fit that judges a question searched by full
// text alone: no embedder, or too few vectors yet.
func FullTextCoverage() CoverageFit { return coverageFit("full-text") }
