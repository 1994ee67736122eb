package main

import (
	"go/ast"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

// TestOneSourceFork keeps "folder or CouchDB?" in one place: every command
// asks its source (source.go) for what it needs, and only openSource reads
// which kind of vault is configured.
func TestOneSourceFork(t *testing.T) {
	fset, files, err := deptest.Sources(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	var forks []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			var operands []ast.Expr
			switch n := n.(type) {
			case *ast.BinaryExpr:
				operands = []ast.Expr{n.X, n.Y}
			case *ast.SwitchStmt:
				operands = []ast.Expr{n.Tag}
			}
			for _, x := range operands {
				if isVaultSource(x) {
					forks = append(forks, fset.Position(x.Pos()).String())
				}
			}
			return true
		})
	}
	if len(forks) != 1 || !strings.HasPrefix(forks[0], "source.go:") {
		t.Errorf("vault.source is compared at %v; want once, in openSource (source.go)", forks)
	}
}

// isVaultSource reports whether x reads the configured kind of vault
// (….Vault.Source).
func isVaultSource(x ast.Expr) bool {
	sel, ok := x.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Source" {
		return false
	}
	inner, ok := sel.X.(*ast.SelectorExpr)
	return ok && inner.Sel.Name == "Vault"
}
