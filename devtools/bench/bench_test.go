package bench

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/tstest/corpustext"
	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "cmd/ragconfig", "config", "feed", "index", "llm", "llm/bge", "llm/builtin", "llm/e5", "llm/uselite", "rag", "vault", "vectorizer",
		"tstest/couchtest", "tstest/fakellm", "tstest/livesyncput", "tstest/syncbuf")
}

// Every scenario runs at the smoke size and the report has every section
// with figures: this checks the benchmarks still run, not their numbers.
func TestBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("the smoke benchmark builds vaultask and starts servers")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	models := installedModels(t)
	out := t.TempDir()
	cfg := Config{Size: "smoke", Out: out, Root: root, Cache: t.TempDir(), Models: models}
	if dir, ok := corpustext.Find(t); ok {
		cfg.Corpus = dir
	} else {
		t.Log("no corpus in ../shared/corpus: section 2 indexes only the generated vault, and the serve sections run on it")
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got Report
	b, err := os.ReadFile(filepath.Join(out, "bench", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sections) != 8 || len(rep.Sections) != 8 {
		t.Fatalf("%d sections in results.json, want 8", len(got.Sections))
	}
	for _, s := range got.Sections {
		t.Logf("section %s took %.1f s", s.ID, s.Seconds)
		if s.Skipped != "" {
			t.Errorf("section %s (%s) skipped: %s", s.ID, s.Title, s.Skipped)
			continue
		}
		if len(s.Rows) == 0 {
			t.Errorf("section %s (%s) has no figure", s.ID, s.Title)
		}
		for _, r := range s.Rows {
			if r.Summary.N == 0 {
				t.Errorf("section %s: %q has no value", s.ID, r.Name)
			}
		}
		if !strings.Contains(string(md), "## "+s.ID+". ") {
			t.Errorf("BENCHMARKS.md has no section %s", s.ID)
		}
	}
	checkEveryModel(t, &got, models)
	for _, c := range []string{"index-throughput.png", "retrieval-by-notes.png", "retrieval-by-chunks.png"} {
		if fi, err := os.Stat(filepath.Join(out, "bench", c)); err != nil || fi.Size() == 0 {
			t.Errorf("chart %s: %v", c, err)
		}
	}
	if got.Machine.Cores == 0 || got.Commit == "" {
		t.Errorf("machine %+v, commit %q", got.Machine, got.Commit)
	}
}

// installedModels are the built-in models whose files are here, by their
// -models names. A missing one is left out, unless VAULTASK_REQUIRE_MODELS=1
// (scripts/test.sh sets it), where the test fails.
func installedModels(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, m := range builtinModels {
		_, err := m.load(1)
		switch {
		case err == nil:
			names = append(names, m.name)
		case errors.Is(err, builtin.ErrModelNotFound) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1":
			t.Logf("%v: the smoke run leaves %s out; vaultask fetch-model %s fetches it", err, m.label, m.name)
		default:
			t.Fatalf("the %s model: %v", m.label, err)
		}
	}
	if len(names) == 0 {
		t.Skip("no built-in model is installed; vaultask fetch-model fetches them")
	}
	return names
}

// checkEveryModel checks that the sections that cost a model have rows
// for each model of the run, and that a model after the first has rows
// compared with the first's figures of the same run.
func checkEveryModel(t *testing.T, got *Report, names []string) {
	t.Helper()
	ms, err := modelsNamed(names)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got.Sections {
		if !slices.Contains([]string{"1", "2", "4", "5", "7"}, s.ID) {
			continue
		}
		for i, m := range ms {
			var rows, against int
			for _, r := range s.Rows {
				if !strings.Contains(r.Name, m.label) && !strings.Contains(r.Name, m.id) {
					continue
				}
				rows++
				if strings.Contains(r.Baseline, ms[0].label) && strings.HasSuffix(r.Baseline, "same run") {
					against++
				}
			}
			if rows == 0 {
				t.Errorf("section %s has no row for %s", s.ID, m.label)
			}
			if i > 0 && against == 0 {
				t.Errorf("section %s: no row of %s is compared with %s's", s.ID, m.label, ms[0].label)
			}
		}
	}
}
