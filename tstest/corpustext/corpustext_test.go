package corpustext

import (
	"compress/gzip"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t) }

// A small dump written here: each kind reads its text back, and an unknown
// document or kind is an error naming it.
func TestReadAndText(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tiny.all_docs.json.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	_, err = zw.Write([]byte(`{"rows":[
		{"id":"en/a.md","doc":{"path":"en/dir/A note.md","children":["h:1","h:2"]}},
		{"id":"h:1","doc":{"data":"first "}},
		{"id":"h:2","doc":{"data":"second"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	docs, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ kind, id, want string }{
		{"chunk", "h:2", "second"},
		{"title", "en/a.md", "A note"},
		{"note", "en/a.md", "first second"},
	} {
		if got, err := Text(docs, tt.kind, tt.id); err != nil || got != tt.want {
			t.Errorf("Text(%s, %s) = %q, %v; want %q", tt.kind, tt.id, got, err, tt.want)
		}
	}
	if _, err := Text(docs, "note", "en/missing.md"); err == nil {
		t.Error("Text of a missing document: no error")
	}
	if _, err := Text(docs, "paragraph", "h:1"); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("Text of kind paragraph: %v, want ErrUnknownKind", err)
	}
}

// Dir honours VAULTASK_CORPUS_DIR, and otherwise looks beside the module
// root, wherever the test runs from.
func TestDir(t *testing.T) {
	t.Setenv("VAULTASK_CORPUS_DIR", "/somewhere/corpus")
	if got := Dir(); got != "/somewhere/corpus" {
		t.Errorf("Dir() = %q with VAULTASK_CORPUS_DIR set", got)
	}
	t.Setenv("VAULTASK_CORPUS_DIR", "")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Dir(), filepath.Join(root, "..", "shared", "corpus"); got != want {
		t.Errorf("Dir() = %q, want %q", got, want)
	}
}

// Cosine of a vector with itself, with its opposite and with one at right
// angles; CheckVectors' least and mean over two vectors that pass.
func TestCosineAndCheckVectors(t *testing.T) {
	a, b := []float32{3, 4}, []float32{-4, 3}
	for _, c := range []struct {
		x, y []float32
		want float64
	}{{a, a, 1}, {a, []float32{-3, -4}, -1}, {a, b, 0}} {
		if got := Cosine(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Cosine(%v, %v) = %g, want %g", c.x, c.y, got, c.want)
		}
	}
	least, mean := CheckVectors(t, []string{"x", "y"}, [][]float32{a, {1, 0}}, [][]float32{a, {1, 0.1}}, 0.99, "the reference")
	if want := 1 / math.Sqrt(1.01); math.Abs(least-want) > 1e-9 || math.Abs(mean-(1+want)/2) > 1e-9 {
		t.Errorf("CheckVectors: least %g, mean %g; want %g, %g", least, mean, want, (1+want)/2)
	}
}
