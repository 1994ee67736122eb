package deptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	{"github.com/asg017/sqlite-vec-go-bindings", "index", "sqlite-vec is linked only for the migration that moves an older index's vectors out of its vec0 table, which only the index may read (index/vec0.go)"},
	{"github.com/mark3labs/mcp-go", "transport/mcp", "MCP is a room of its own: one package speaks the protocol's types, sessions and hooks, and the rest of the HTTP surface mounts it as a handler"},
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
	{"rag", "github.com/openai/openai-go", "answering speaks its own ChatModel types; cmd/vaultask adapts llm's client to them, so rag links no provider's client"},
	{"rag", Module + "/llm", "answering declares the model interfaces it consumes and their types; llm's clients reach it through cmd/vaultask"},
	{"transport", "github.com/go-kivik/kivik", "the HTTP surface answers through rag; only cmd wires the feed"},
	{"transport", Module + "/feed", "the HTTP surface answers through rag; only cmd wires the feed"},
	{"config", "github.com/mattn/go-sqlite3", "config is a leaf every command loads first"},
	{"config", "github.com/openai/openai-go", "config is a leaf: provider rules come from llm through ModelPolicy"},
	{"rag", "github.com/mattn/go-sqlite3", "answering names the index's nouns from vault and reads through the Searcher it declares, never SQLite"},
	{"rag", "github.com/asg017/sqlite-vec-go-bindings", "answering reads vectors through the Searcher it declares, never sqlite-vec"},
	{"rag", Module + "/index", "answering names the index's nouns from vault and reads through the Searcher it declares"},
	{"transport", "github.com/mattn/go-sqlite3", "the HTTP surface names the index's nouns from vault and reads through the interfaces it declares"},
	{"transport", "github.com/asg017/sqlite-vec-go-bindings", "the HTTP surface never links sqlite-vec"},
	{"transport", Module + "/index", "the HTTP surface names the index's nouns from vault and reads through the interfaces it declares"},
	{"transport/mcp", "github.com/mattn/go-sqlite3", "MCP reads the notes through the Notes it declares, never SQLite"},
	{"transport/mcp", "github.com/asg017/sqlite-vec-go-bindings", "MCP never links sqlite-vec"},
	{"transport/mcp", Module + "/index", "MCP names the index's nouns from vault and reads through the Notes it declares"},
	{"eval", "github.com/mattn/go-sqlite3", "evaluation ranks through rag; cmd/vaultask opens the index"},
	{"eval", "github.com/asg017/sqlite-vec-go-bindings", "evaluation ranks through rag; cmd/vaultask opens the index"},
	{"index/vectorset", "github.com/mattn/go-sqlite3", "the in-memory vector set is pure Go, apart from the SQL that feeds it"},
	{"vectorizer", "github.com/openai/openai-go", "the background embedder takes any Embedder it is given; model clients and providers are llm's"},
	{"internal/simd", "github.com/mattn/go-sqlite3", "the kernels are a leaf that both index and llm import: no cgo, so their arm64 tests run under qemu (scripts/test-arm64.sh)"},
	{"llm/builtin", "github.com/openai/openai-go", "a built-in model runs in the process, on the files its spec pins: the provider clients are llm's, and a built-in model never reaches one"},
	{"internal/modelfetch", "github.com/mattn/go-sqlite3", "the fetch of the built-in models' files is a leaf of the standard library's archive, hash and HTTP packages: a fresh machine runs it before any index exists"},
}

// stdOnly names the packages of this module that link the standard library
// alone, and why.
var stdOnly = []struct{ pkg, reason string }{
	{"vault", "the ground floor of nouns: every package may import it, so it must bring nothing with it"},
	{"transport/allowweb", "allow_web is read one way by every entry point, /v1 and MCP alike, and brings nothing with it"},
	{"internal/atomicfile", "a leaf config imports, and config is a leaf every command loads first"},
}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// unknownNames returns a sentence for every package or module a rule names
// that is not among known (this module's packages and everything they
// link): a rename or a removal must not leave a rule that checks nothing.
func unknownNames(known map[string]bool) []string {
	exists := func(p string) bool {
		for k := range known {
			if within(k, p) {
				return true
			}
		}
		return false
	}
	rel := func(p string) string { return Module + "/" + p }
	var out []string
	check := func(name, rule string) {
		if !exists(name) {
			out = append(out, fmt.Sprintf("%s names %s, which no package of %s is or links", rule, name, Module))
		}
	}
	for _, r := range only {
		check(r.module, "the rule that only "+r.owner+" imports "+r.module)
		check(rel(r.owner), "the rule that only "+r.owner+" imports "+r.module)
	}
	for _, r := range never {
		check(rel(r.pkg), "the rule that "+r.pkg+" never links "+r.dep)
		check(r.dep, "the rule that "+r.pkg+" never links "+r.dep)
	}
	for _, r := range stdOnly {
		check(rel(r.pkg), "the rule that "+r.pkg+" links the standard library only")
	}
	return out
}

// standard reports whether p is a standard library package: the go command
// reserves import paths whose first element has no dot for it.
func standard(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
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
	known := map[string]bool{}
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		known[p.ImportPath] = true
		for _, d := range p.Deps {
			known[d] = true
		}
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
		if product(rel) {
			for _, d := range p.Deps {
				if within(d, Module+"/devtools") || within(d, Module+"/tstest") {
					t.Errorf("%s links %s: the product never links the development tools (devtools/) or the test support (tstest/), which point up at the packages they measure and test", p.ImportPath, d)
				}
			}
		}
		for _, r := range stdOnly {
			if rel != r.pkg {
				continue
			}
			for _, d := range p.Deps {
				if !standard(d) {
					t.Errorf("%s links %s, and may link the standard library only: %s", p.ImportPath, d, r.reason)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list listed %d packages of %s", seen, Module)
	}
	for _, msg := range unknownNames(known) {
		t.Error(msg)
	}
}

// product reports whether rel, a package of this module relative to its
// root, is part of the product: anything but the development tools and the
// test support.
func product(rel string) bool {
	return !within(rel, "devtools") && !within(rel, "tstest")
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

// TestRulesNameRealPackages shows that a rule whose package was renamed away
// fails the check rather than passing for want of anything to check.
func TestRulesNameRealPackages(t *testing.T) {
	known := map[string]bool{}
	for _, r := range only {
		known[r.module] = true
		known[Module+"/"+r.owner] = true
	}
	for _, r := range never {
		known[Module+"/"+r.pkg] = true
		known[r.dep] = true
	}
	for _, r := range stdOnly {
		known[Module+"/"+r.pkg] = true
	}
	if got := unknownNames(known); len(got) != 0 {
		t.Fatalf("every name known, yet unknownNames = %q", got)
	}
	delete(known, Module+"/vault")
	delete(known, "github.com/mattn/go-sqlite3")
	got := strings.Join(unknownNames(known), "\n")
	for _, want := range []string{"names " + Module + "/vault,", "names github.com/mattn/go-sqlite3,"} {
		if !strings.Contains(got, want) {
			t.Errorf("with %s gone, unknownNames = %q; want a sentence that %s", strings.Fields(want)[1], got, want)
		}
	}
}

func TestStandard(t *testing.T) {
	for p, want := range map[string]bool{"fmt": true, "net/http": true, "internal/abi": true, "vendor/golang.org/x/net/idna": true,
		"github.com/mattn/go-sqlite3": false, "golang.org/x/sync/errgroup": false, Module + "/vault": false} {
		if got := standard(p); got != want {
			t.Errorf("standard(%q) = %v, want %v", p, got, want)
		}
	}
}
