package llm

import (
	"io/fs"
	"strings"
	"testing"
)

// Every shipped coverage fit reads, with its parts of one length and its
// lines in order; every model that names a fit has one, and the built-in
// models all do.
func TestCoverageFits(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(coverageFiles, "coverage/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fits: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "coverage/"), ".json")
		f := coverageFit(name)
		n := len(f.Features)
		if f.Name != name || n == 0 || len(f.Mean) != n || len(f.Scale) != n || len(f.Weights) != n {
			t.Errorf("%s: name %q, %d features, %d means, %d scales, %d weights", file, f.Name, n, len(f.Mean), len(f.Scale), len(f.Weights))
		}
		if !(0 <= f.Silent && f.Silent <= f.Thin && f.Thin <= f.Grey && f.Grey <= 1) {
			t.Errorf("%s: lines silent %v, thin %v, grey %v out of order", file, f.Silent, f.Thin, f.Grey)
		}
		if !strings.Contains(f.Fitted, "questions") {
			t.Errorf("%s: fitted %q does not say what it was fitted on", file, f.Fitted)
		}
	}
	for _, m := range knownEmbeddingModels {
		if m.model.Coverage != "" {
			if _, err := fs.Stat(coverageFiles, "coverage/"+m.model.Coverage+".json"); err != nil {
				t.Errorf("%s names the fit %s: %v", m.family, m.model.Coverage, err)
			}
		}
	}
	for _, s := range builtinModels {
		if _, err := fs.Stat(coverageFiles, "coverage/"+s.Coverage+".json"); err != nil {
			t.Errorf("built-in %s names the fit %q: %v", s.ID, s.Coverage, err)
		}
	}
	if f, own := EmbeddingCoverage("ollama/a-model-never-measured"); own || f.Name != "fallback" {
		t.Errorf("a model without a fit: %q, own %v; want the fallback", f.Name, own)
	}
	if FullTextCoverage().Name != "full-text" {
		t.Error("the full-text fit is not named full-text")
	}
}
