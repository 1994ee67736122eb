package rag

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/vaultask/vaultask/vault"
)

// Outcome is how well the vault covers a question.
type Outcome string

// The outcomes of the coverage judgement.
const (
	// OutcomeCovered: the vault answers the question.
	OutcomeCovered Outcome = "covered"
	// OutcomeThin: the vault holds something near the question but likely not
	// its answer; the web, when the request allows it, supplements it.
	OutcomeThin Outcome = "thin"
	// OutcomeSilent: nothing in the vault is about the question.
	OutcomeSilent Outcome = "silent"
	// OutcomeIndexing: the vault would be silent or thin, but the index has not
	// read the whole vault yet, so it cannot say so.
	OutcomeIndexing Outcome = "indexing"
)

// CoverageModel is a fitted coverage judgement: a logistic model over named
// features of a question's retrieval (coverageFeatures), giving the
// probability that the vault answers the question, and the probabilities
// below which the vault is thin and silent. Each embedding model has its
// own, fitted on the help, hub and demo question sets (eval web-trigger
// --features, devtools/cmd/coverage-fit), since each spreads its distances
// on a scale of its own.
type CoverageModel struct {
	// Name says which fit this is, for the trace and the API.
	Name string
	// Features name the inputs; Mean and Scale standardise each, Weights
	// and Bias weigh them.
	Features     []string
	Mean, Scale  []float64
	Weights      []float64
	Bias         float64
	Thin, Silent float64
	// Grey is the probability below which, above Thin, a covered judgement
	// is unsure: a generation model reads the passages and decides.
	Grey float64
}

// Validate refuses a model whose parts do not fit together or whose
// thresholds are not ordered probabilities.
func (m CoverageModel) Validate() error {
	n := len(m.Features)
	switch {
	case n == 0:
		return fmt.Errorf("coverage model %q: no features", m.Name)
	case len(m.Mean) != n || len(m.Scale) != n || len(m.Weights) != n:
		return fmt.Errorf("coverage model %q: %d features but %d means, %d scales and %d weights", m.Name, n, len(m.Mean), len(m.Scale), len(m.Weights))
	case !(0 <= m.Silent && m.Silent <= m.Thin && m.Thin <= m.Grey && m.Grey <= 1):
		return fmt.Errorf("coverage model %q: want 0 ≤ silent (%g) ≤ thin (%g) ≤ grey (%g) ≤ 1", m.Name, m.Silent, m.Thin, m.Grey)
	}
	for i, s := range m.Scale {
		if !(s > 0) {
			return fmt.Errorf("coverage model %q: feature %s has scale %g, want > 0", m.Name, m.Features[i], s)
		}
	}
	for _, f := range m.Features {
		if _, ok := coverageFeatureNames[f]; !ok {
			return fmt.Errorf("coverage model %q: unknown feature %q", m.Name, f)
		}
	}
	return nil
}

// probability is the model's probability that the vault covers a question
// with features f.
func (m CoverageModel) probability(f map[string]float64) float64 {
	z := m.Bias
	for i, name := range m.Features {
		z += m.Weights[i] * (f[name] - m.Mean[i]) / m.Scale[i]
	}
	return 1 / (1 + math.Exp(-z))
}

// Coverage is the judgement of one question's retrieval.
type Coverage struct {
	Outcome Outcome `json:"outcome"`
	// Score is the probability that the vault answers the question.
	Score float64 `json:"score"`
	// Grey is set when the judgement is near the line between covered and
	// thin, where reading the passages decides better than any score.
	Grey bool `json:"grey"`
	// Model names the fitted model that judged.
	Model string `json:"model"`
	// Done and Total are how far the index is through its first read of
	// the vault, for OutcomeIndexing (0 of 0 when not known).
	Done  int `json:"indexed_notes,omitempty"`
	Total int `json:"total_notes,omitempty"`
}

// judge maps f through m to an outcome.
func (m CoverageModel) judge(f map[string]float64) Coverage {
	p := m.probability(f)
	c := Coverage{Score: p, Model: m.Name}
	switch {
	case p < m.Silent:
		c.Outcome = OutcomeSilent
	case p < m.Thin:
		c.Outcome = OutcomeThin
	default:
		c.Outcome = OutcomeCovered
		c.Grey = p < m.Grey
	}
	return c
}

// IndexState is how complete the index is, as the coverage judgement
// needs to know it: a vault the index has not read whole cannot be said
// to be silent, and hits judged by vectors that are not there yet would
// look far.
type IndexState struct {
	// Scanning is set until the index has read the whole vault once;
	// Done of Total notes are read so far (0 of 0 when not known, or not
	// to be told to the request's scope).
	Scanning    bool
	Done, Total int
	// Unembedded is the share of the chunks in scope still waiting for
	// their vector.
	Unembedded float64
}

// maxUnembedded is the share of chunks without a vector above which the
// vector search's distances are not trusted to judge coverage: the
// full-text judgement judges instead.
const maxUnembedded = 0.05

// judgeCoverage judges how well the vault covers r's question: a fitted
// model of the question's space (s.Coverage) reads the distances of the
// vector search's hits and what the vault and the top hits hold of the
// question's words (coverageFeatures); without a query vector, or while
// many chunks wait for theirs, the full-text model reads the words alone.
// Nothing found at all is silent. An index still reading the vault for the
// first time says so rather than calling a question it cannot answer yet
// thin or silent.
func (p *Pipeline) judgeCoverage(ctx context.Context, r *Retrieval, s Settings, space vault.EmbeddingSpace) error {
	ws, err := contentWords(ctx, p.opts.Searcher, r.Query, r.Scope)
	if err != nil {
		return err
	}
	var state IndexState
	if p.opts.IndexState != nil {
		state = p.opts.IndexState(ctx, r.Scope)
	}
	vector := make([]vault.Chunk, len(r.Vector))
	for i, h := range r.Vector {
		vector[i] = h.Chunk
	}
	m, ok := s.Coverage[space.Model]
	why := "the fit of " + space.Model
	switch {
	case r.FullTextOnly:
		m, ok, why = s.FullTextCoverage, len(s.FullTextCoverage.Features) > 0, "no query vector: the full-text fit"
		vector = nil
	case state.Unembedded > maxUnembedded:
		m, ok = s.FullTextCoverage, len(s.FullTextCoverage.Features) > 0
		why = fmt.Sprintf("%.0f%% of the chunks wait for their vector: the full-text fit", 100*state.Unembedded)
		vector = nil
	case !ok:
		m, ok, why = s.FullTextCoverage, len(s.FullTextCoverage.Features) > 0, "no fit of "+space.Model+": the full-text fit"
	}
	r.Features = coverageFeatures(r.Query, ws, vector, r.FTS, r.Direct)
	switch {
	case len(r.Direct) == 0:
		r.Coverage = Coverage{Outcome: OutcomeSilent, Model: "nothing found"}
	case !ok:
		r.Coverage = Coverage{Outcome: OutcomeCovered, Score: 1, Model: "no fit: anything found counts"}
	default:
		r.Coverage = m.judge(r.Features)
	}
	if state.Scanning && r.Coverage.Outcome != OutcomeCovered {
		r.Coverage.Outcome = OutcomeIndexing
		r.Coverage.Done, r.Coverage.Total = state.Done, state.Total
	}
	r.Thin = r.Coverage.Outcome != OutcomeCovered
	r.Silent = r.Coverage.Outcome == OutcomeSilent
	r.Trace.stage("coverage", nil, fmt.Sprintf("%s (probability %.2f that the vault answers it; %s)", r.Coverage.Outcome, r.Coverage.Score, why), featureList(r.Features))
	return nil
}

// featureList is the features as the trace shows them, by name.
func featureList(f map[string]float64) string {
	names := slices.Sorted(maps.Keys(f))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.3g", n, f[n])
	}
	return strings.Join(parts, ", ")
}
