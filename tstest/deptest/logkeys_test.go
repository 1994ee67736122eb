package deptest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// keyStart gives, for each slog function or *slog.Logger method that takes
// alternating keys and values, the index of its first key argument.
var keyStart = map[string]int{
	"Debug": 1, "Info": 1, "Warn": 1, "Error": 1,
	"DebugContext": 2, "InfoContext": 2, "WarnContext": 2, "ErrorContext": 2,
	"Log":  3,
	"With": 0,
}

// attrCtors are the slog functions whose first argument is an attribute key.
var attrCtors = map[string]bool{
	"String": true, "Int": true, "Int64": true, "Uint64": true, "Float64": true,
	"Bool": true, "Time": true, "Duration": true, "Any": true, "Group": true,
}

// listedExport is what slogKeyLiterals reads of `go list -export -json`.
type listedExport struct {
	ImportPath string
	Dir        string
	Export     string
	DepOnly    bool
	GoFiles    []string
}

// slogKeyLiterals type-checks the non-test files of the packages patterns
// name (run from dir, with the sqlite_fts5 tag) and returns "file:line: key"
// for every string literal used as a slog attribute key. Type information,
// not method names, tells a slog call apart: http.Error and t.Error take
// string literals too.
func slogKeyLiterals(dir string, patterns ...string) ([]string, error) {
	pkgs, exports, err := listExports(dir, patterns)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("go list gave no export data for %s", path)
		}
		return os.Open(f)
	})
	var out []string
	for _, p := range pkgs {
		found, err := packageKeyLiterals(fset, imp, p)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// listExports returns the packages patterns name and the export data file
// of every package they link, by import path.
func listExports(dir string, patterns []string) ([]listedExport, map[string]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-tags", "sqlite_fts5", "-export", "-deps", "-json"}, patterns...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("go list -export %s: %v\n%s", strings.Join(patterns, " "), err, stderr.String())
	}
	var pkgs []listedExport
	exports := map[string]string{}
	dec := json.NewDecoder(&stdout)
	for {
		var p listedExport
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, err
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, exports, nil
}

// packageKeyLiterals type-checks one listed package and returns its slog key
// literals.
func packageKeyLiterals(fset *token.FileSet, imp types.Importer, p listedExport) ([]string, error) {
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
		return nil, fmt.Errorf("type-check %s: %w", p.ImportPath, err)
	}
	var keys []ast.Expr
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				keys = append(keys, keyArgs(info, call)...)
			}
			return true
		})
	}
	// Inspect meets an outer call before the calls in its arguments; sorted,
	// the report reads in file order.
	slices.SortFunc(keys, func(a, b ast.Expr) int { return cmp.Compare(a.Pos(), b.Pos()) })
	var out []string
	for _, key := range keys {
		if lit := stringLiteral(key); lit != "" {
			out = append(out, fmt.Sprintf("%s: %s", fset.Position(key.Pos()), lit))
		}
	}
	return out, nil
}

// keyArgs returns the arguments of call that slog reads as attribute keys,
// or nil when call is not a slog call that takes keys.
func keyArgs(info *types.Info, call *ast.CallExpr) []ast.Expr {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "log/slog" {
		return nil
	}
	recv := fn.Signature().Recv()
	if recv == nil && attrCtors[fn.Name()] && len(call.Args) > 0 {
		return call.Args[:1]
	}
	start, takesKeys := keyStart[fn.Name()]
	if !takesKeys || call.Ellipsis.IsValid() || (recv != nil && !isSlogType(recv.Type(), "Logger")) {
		return nil
	}
	var keys []ast.Expr
	for i := start; i < len(call.Args); {
		if isSlogType(info.Types[call.Args[i]].Type, "Attr") {
			i++
			continue
		}
		keys = append(keys, call.Args[i])
		i += 2
	}
	return keys
}

// isSlogType reports whether t is slog's type name or a pointer to it.
func isSlogType(t types.Type, name string) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "log/slog" && n.Obj().Name() == name
}

// stringLiteral returns the first string literal within e, quoted, or "".
func stringLiteral(e ast.Expr) string {
	var lit string
	ast.Inspect(e, func(n ast.Node) bool {
		if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING && lit == "" {
			lit = b.Value
		}
		return lit == ""
	})
	return lit
}

// TestLogKeysAreConstants keeps STYLE.md's "attribute keys as constants":
// every slog attribute key in the module's non-test files is a named
// constant (each package's log.go), so a key is spelled once per package and
// a log search finds every line that emits it.
func TestLogKeysAreConstants(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	watchSources(t)
	found, err := slogKeyLiterals("../..", Module+"/...")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s is a string literal used as a slog attribute key: name it keyX in the package's log.go", f)
	}
}

// TestSlogKeyLiteralsFindsLiterals checks the checker on a module of its own:
// it names each literal key of each kind of slog call, and nothing else.
func TestSlogKeyLiteralsFindsLiterals(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	dir := t.TempDir()
	src := `package p

import (
	"context"
	"log/slog"
	"net/http"
)

const keyOK = "ok"

func f(ctx context.Context, l *slog.Logger, w http.ResponseWriter, rest []any) {
	l.Info("m", "info", 1, keyOK, "a value")
	slog.With("with", 1).Warn("m", slog.String("ctor", "v"), "afterAttr", 3)
	l.Log(ctx, slog.LevelInfo, "m", ("paren"), 1)
	l.ErrorContext(ctx, "m", keyOK+"concat", 1)
	l.Debug("m", rest...)
	l.With(keyOK, "a value").Info("m")
	http.Error(w, "not a key", http.StatusBadRequest)
}
`
	for name, text := range map[string]string{
		"go.mod":    "module example.com/p\n\ngo 1.26\n",
		"p.go":      src,
		"p_test.go": "package p\n\nimport \"log/slog\"\n\nfunc g() { slog.Info(\"m\", \"intest\", 1) }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, err := slogKeyLiterals(dir, "./...")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, strings.TrimPrefix(f, filepath.Join(dir, "p.go")+":"))
	}
	want := []string{`12:14: "info"`, `13:12: "with"`, `13:45: "ctor"`, `13:59: "afterAttr"`, `14:34: "paren"`, `15:27: "concat"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("slogKeyLiterals found\n%s\nwant\n%s", strings.Join(found, "\n"), strings.Join(want, "\n"))
	}
}
