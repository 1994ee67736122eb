package deptest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Module is this module's import path.
const Module = "github.com/vaultask/vaultask"

// Check parses the non-test Go files of the package in the current directory
// and fails tb for every import of a module package not named in allowed
// (paths relative to the module root, such as "index").
func Check(tb testing.TB, allowed ...string) {
	tb.Helper()
	imports, err := ModuleImports(".")
	if err != nil {
		tb.Fatal(err)
	}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for imp, file := range imports {
		if !ok[imp] {
			tb.Errorf("%s imports %s/%s, which this package may not import (allowed: %v)", file, Module, imp, allowed)
		}
	}
}

// ModuleImports returns the module-relative imports of the non-test files in
// dir, each mapped to the first file that imports it.
func ModuleImports(dir string) (map[string]string, error) {
	fset, files, err := Sources(dir, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range files {
		name := filepath.Base(fset.Position(f.Package).Filename)
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return nil, err
			}
			if rel, found := strings.CutPrefix(path, Module+"/"); found {
				if _, seen := out[rel]; !seen {
					out[rel] = name
				}
			}
		}
	}
	return out, nil
}

// Sources parses the non-test Go files of the package in dir, in name
// order, for tests that check what a package's code may contain.
func Sources(dir string, mode parser.Mode) (*token.FileSet, []*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, mode)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	return fset, files, nil
}
