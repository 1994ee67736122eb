package deptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// only names third-party modules a single package of this module may import
// directly, and why.
var only = []struct {
	module, owner, reason string
}{
	{"github.com/go-kivik/kivik", "feed", "CouchDB is read by feed alone: one HTTP, auth and error path, and nothing else near a client that could write to the vault's database"},
	{"github.com/openai/openai-go", "llm", "model clients and provider routing live in llm, so that a provider's key never reaches code that does not know which provider it is for"},
	{"github.com/mattn/go-sqlite3", "index", "the SQLite file has one owner, which keeps the writer lock, the migrations and the sensitivity filter inside every query"},
	{"github.com/asg017/sqlite-vec-go-bindings", "index", "the vector table belongs to the index, beside the chunks whose sensitivity its KNN filters on"},
}

// never names what a package of this module must not link at all, even
// through other packages, and why.
var never = []struct {
	pkg, dep, reason string
}{
	{"llm", "github.com/mattn/go-sqlite3", "llm is a leaf: model clients never reach the index"},
	{"llm", "github.com/go-kivik/kivik", "llm is a leaf: model clients never reach CouchDB"},
	{"rag", "github.com/go-kivik/kivik", "answering reads the index, never CouchDB"},
	{"rag", Module + "/feed", "answering reads the index, never the feed that writes it"},
	{"transport", "github.com/go-kivik/kivik", "the HTTP surface answers through rag; only cmd wires the feed"},
	{"transport", Module + "/feed", "the HTTP surface answers through rag; only cmd wires the feed"},
	{"config", "github.com/mattn/go-sqlite3", "config is a leaf every command loads first"},
	{"config", "github.com/openai/openai-go", "config is a leaf: provider rules come from llm through ModelPolicy"},
}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// TestModuleRules checks the import rules between this module's packages and
// the third-party modules, directly and transitively, with `go list`.
func TestModuleRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	watchSources(t)
	cmd := exec.Command("go", "list", "-tags", "sqlite_fts5", "-json", Module+"/...")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(&out)
	seen := 0
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, Module), "/")
		for _, r := range only {
			for _, imp := range p.Imports {
				if within(imp, r.module) && rel != r.owner && !strings.HasPrefix(rel, r.owner+"/") {
					t.Errorf("%s imports %s, which only %s may: %s", p.ImportPath, imp, r.owner, r.reason)
				}
			}
		}
		for _, r := range never {
			if rel != r.pkg {
				continue
			}
			if i := slices.IndexFunc(p.Deps, func(d string) bool { return within(d, r.dep) }); i >= 0 {
				t.Errorf("%s links %s: %s", p.ImportPath, p.Deps[i], r.reason)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list listed %d packages of %s", seen, Module)
	}
}

// within reports whether import path p is module or a package under it.
func within(p, module string) bool { return p == module || strings.HasPrefix(p, module+"/") }

// watchSources opens every Go file and go.mod of the module, so that the
// go command's test cache, which keys a result on the files a test opened,
// runs this test again when any of them changes: `go list` reads them in
// another process, which the cache does not see.
func watchSources(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root:
			return filepath.SkipDir
		case !d.IsDir() && (strings.HasSuffix(p, ".go") || d.Name() == "go.mod"):
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			return f.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
