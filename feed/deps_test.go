package feed

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "index", "vault", "feed/livesync", "internal/retry", "internal/routine")
}

// TestKivikOnlyInCouchFiles keeps every CouchDB request in couch*.go (see
// doc.go): no other file imports kivik or reaches for Couch's kivik handles
// (its db and client fields).
func TestKivikOnlyInCouchFiles(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "couch") {
			continue
		}
		checked++
		f, err := parser.ParseFile(fset, filepath.Join(".", name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range f.Imports {
			if path, _ := strconv.Unquote(spec.Path.Value); strings.HasPrefix(path, "github.com/go-kivik/") {
				t.Errorf("%s imports %s: CouchDB requests belong in couch*.go", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && (sel.Sel.Name == "db" || sel.Sel.Name == "client") {
				t.Errorf("%s uses Couch's kivik handle %s: CouchDB requests belong in couch*.go", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no non-test files besides couch*.go: run from the package directory")
	}
}
