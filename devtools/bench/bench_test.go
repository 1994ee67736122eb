package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "config", "feed", "index", "llm", "llm/uselite", "rag", "vault", "vectorizer",
		"tstest/couchtest", "tstest/fakellm", "tstest/livesyncput", "internal/ragconfig", "tstest/syncbuf")
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
	out := t.TempDir()
	cfg := Config{Size: "smoke", Out: out, Root: root, Cache: t.TempDir()}
	if dir, ok := couchtest.SharedDir(); ok && exists(filepath.Join(dir, "corpus", "MANIFEST.md")) {
		cfg.Corpus = filepath.Join(dir, "corpus")
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
	for _, c := range []string{"index-throughput.png", "retrieval-by-notes.png", "retrieval-by-chunks.png"} {
		if fi, err := os.Stat(filepath.Join(out, "bench", c)); err != nil || fi.Size() == 0 {
			t.Errorf("chart %s: %v", c, err)
		}
	}
	if got.Machine.Cores == 0 || got.Commit == "" {
		t.Errorf("machine %+v, commit %q", got.Machine, got.Commit)
	}
}
