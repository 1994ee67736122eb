package atomicfile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteFile replaces a file's text and mode, and leaves nothing else in
// its directory.
func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret")
	if err := os.WriteFile(path, []byte("old text, longer than the new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "new" {
		t.Errorf("read back %q, %v; want new", got, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %v, want the file alone", entries)
	}
}

// A write that fails (here the rename, over a directory) leaves the
// target as it was and no temporary file behind.
func TestWriteFileFailsWhole(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "taken")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "inside"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("text"), 0o600); err == nil {
		t.Fatal("a file was written over a directory")
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		t.Errorf("the directory is gone: %v, %v", fi, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %v after a failed write, want the target alone", entries)
	}
	if err := WriteFile(filepath.Join(dir, "no such dir", "file"), []byte("text"), 0o600); err == nil {
		t.Error("a file was written into a directory that does not exist")
	}
}

// No other package of the module renames a file into place: a save that
// must survive a crash goes through WriteFile or Create, which sync the
// directory too. (serve's session key was written by a copy that did not.)
func TestTheOnlyRename(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	here, _ := filepath.Abs(".")
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == here || path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Rename" {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "os" {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s:%d renames a file into place: save it with atomicfile.WriteFile or atomicfile.Create", rel, fset.Position(sel.Pos()).Line)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A Pending file is not seen until Commit, which renames it over the old
// one: a reader that opened the old file goes on reading it whole. Abort
// leaves the old file and nothing else.
func TestPending(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.bin")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()

	dropped, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dropped.Write([]byte("dropped")); err != nil {
		t.Fatal(err)
	}
	dropped.Abort()
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("after Abort the file reads %q, want old", got)
	}

	p, err := Create(path, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Abort()
	for _, part := range []string{"new ", "content"} {
		if _, err := p.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("before Commit the file reads %q, want old", got)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new content" {
		t.Errorf("after Commit the file reads %q, want new content", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, %v; want 0640", fi.Mode().Perm(), err)
	}
	if old, err := io.ReadAll(reader); err != nil || string(old) != "old" {
		t.Errorf("the reader of the old file reads %q, %v; want old", old, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %v, want the file alone", entries)
	}
}
