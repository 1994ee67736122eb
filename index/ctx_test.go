package index

import (
	"go/ast"
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

// TestNoContextInStructs keeps a request's context out of the package's
// structs: a context stored beside a transaction outlives the call that
// owns it, so every function that needs one takes it as its first
// parameter.
func TestNoContextInStructs(t *testing.T) {
	fset, files, err := deptest.Sources(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	structs := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			structs++
			for _, field := range st.Fields.List {
				if isContext(field.Type) {
					t.Errorf("%s: a struct holds a context.Context; pass it as a parameter", fset.Position(field.Pos()))
				}
			}
			return true
		})
	}
	if structs == 0 {
		t.Fatal("no struct type found: the test read no source")
	}
}

func isContext(expr ast.Expr) bool {
	sel, ok := expr.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Context" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "context"
}
