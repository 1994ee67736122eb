package deptest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestModuleImportsFindsForbidden(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nimport (\n\t\"fmt\"\n\t\"" + Module + "/feed\"\n)\n\nvar _ = fmt.Sprint\nvar _ = feed.X\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	testSrc := "package p\n\nimport _ \"" + Module + "/rag\"\n"
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(testSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ModuleImports(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["feed"] != "p.go" {
		t.Fatalf("ModuleImports = %v, want only feed from p.go (test files ignored)", got)
	}
}
