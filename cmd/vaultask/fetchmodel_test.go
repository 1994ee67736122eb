package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/llm"
)

// TestFetchModel: fetch-model refuses a model it does not know before
// fetching anything, naming those it knows; over a directory whose folders
// hold every file with its pinned sum it makes no request and says so, a
// line per model; without --dir it fetches into models.builtin_dir. (The
// download itself is internal/modelfetch's test, on a loopback registry.)
func TestFetchModel(t *testing.T) {
	empty := t.TempDir()
	_, stderr, err := run(t, nil, "fetch-model", "--dir", empty, "e5", "gte")
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `"gte": the built-in models are e5, bge, use-lite`) || !strings.Contains(stderr, "Models: e5, bge, use-lite") {
		t.Errorf("fetch-model e5 gte = %v\n%s; want a usage error naming the models", err, stderr)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("a refused fetch left %v", entries)
	}

	src := llm.DefaultBuiltinDir()
	if d := os.Getenv("VAULTASK_MODELS__BUILTIN_DIR"); d != "" {
		src = d
	}
	dir := t.TempDir()
	var want strings.Builder
	for _, s := range llm.BuiltinModels() {
		folder := filepath.Join(dir, s.Dir)
		if err := os.Mkdir(folder, 0o755); err != nil {
			t.Fatal(err)
		}
		// Each file linked, not the folder: a fetch writes into the test's
		// folder, never the installed one.
		for _, name := range s.Sums.Names() {
			from := filepath.Join(src, s.Dir, name)
			if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1" {
				t.Skipf("no %s here: vaultask fetch-model fetches it", from)
			}
			if err := os.Symlink(from, filepath.Join(folder, name)); err != nil {
				t.Fatal(err)
			}
		}
		want.WriteString(s.Name + ": " + folder + " holds its files already\n")
	}
	out, stderr, err := run(t, []string{"VAULTASK_MODELS__BUILTIN_DIR=" + dir}, "fetch-model")
	if err != nil || out != want.String() {
		t.Errorf("fetch-model over whole folders = %v, stdout\n%s\nstderr\n%s\nwant stdout\n%s", err, out, stderr, want.String())
	}
}
