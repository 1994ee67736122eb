package corpustext

import (
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/config"
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

// Require skips a test without the corpus, or fails it with
// VAULTASK_REQUIRE_CORPUS=1, naming the directory; with the corpus it
// returns its directory, and Find says whether it is there. The names are the ones config reserves.
func TestRequire(t *testing.T) {
	if EnvRequire != config.EnvRequireCorpus || EnvDir != config.EnvCorpusDir {
		t.Fatalf("%s, %s here; config reserves %s, %s", EnvRequire, EnvDir, config.EnvRequireCorpus, config.EnvCorpusDir)
	}
	missing := filepath.Join(t.TempDir(), "nothing")
	present := t.TempDir()
	if err := os.WriteFile(filepath.Join(present, "MANIFEST.md"), []byte("# corpus\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, require      string
		wantSkip, wantErr bool
	}{
		{missing, "", true, false},
		{missing, "0", true, false},
		{missing, "1", false, true},
		{present, "", false, false},
		{present, "1", false, false},
	} {
		t.Setenv(EnvDir, c.dir)
		t.Setenv(EnvRequire, c.require)
		got := ""
		r := record(t, func(tb testing.TB) { got = Require(tb) })
		if wantDir := map[bool]string{true: c.dir}[c.dir == present]; got != wantDir {
			t.Errorf("Require with %s=%q, %s: %q, want %q", EnvRequire, c.require, c.dir, got, wantDir)
		}
		record(t, func(tb testing.TB) {
			if got, ok := Find(tb); got != c.dir || ok != (c.dir == present) {
				t.Errorf("Find with %s=%q, %s: %q, %v", EnvRequire, c.require, c.dir, got, ok)
			}
		})
		said := strings.Join(append(r.skips, r.errs...), "")
		if skipped, failed := len(r.skips) > 0, len(r.errs) > 0; skipped != c.wantSkip || failed != c.wantErr || (said != "") != strings.Contains(said, c.dir) {
			t.Errorf("Require with %s=%q, %s: skipped %v %q, failed %v %q; want %v, %v, naming the directory",
				EnvRequire, c.require, c.dir, skipped, r.skips, failed, r.errs, c.wantSkip, c.wantErr)
		}
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

// recorder is a testing.TB that keeps the failures reported to it.
type recorder struct {
	testing.TB
	errs, skips []string
}

func (r *recorder) Helper() {}

// Skipf and Fatalf end the goroutine, as testing's do: call through record.
func (r *recorder) Skipf(format string, args ...any) {
	r.skips = append(r.skips, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// record runs f on a recorder in a goroutine of its own and returns the
// recorder once f has returned or stopped.
func record(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// What a broken kernel returns — zeros, NaN, an infinity, too few or too
// many values, nothing — fails every check, though a cosine or a
// difference with NaN compares false with any bound; a good vector passes.
func TestChecksFailBrokenVectors(t *testing.T) {
	good := []float32{0.6, 0.8, 0}
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	broken := map[string][]float32{
		"zeros":     {0, 0, 0},
		"NaN":       {nan, nan, nan},
		"one NaN":   {0.6, nan, 0},
		"infinity":  {inf, 0.8, 0},
		"short":     {0.6, 0.8},
		"long":      {0.6, 0.8, 0, 0},
		"empty":     {},
		"nil":       nil,
		"unit-less": {6, 8, 0},
	}
	checks := map[string]func(tb testing.TB, v []float32){
		"CheckVector":                   func(tb testing.TB, v []float32) { CheckVector(tb, "v", v, 3) },
		"CheckUnit":                     func(tb testing.TB, v []float32) { CheckUnit(tb, "v", v, 3, 1e-5) },
		"AtLeast":                       func(tb testing.TB, v []float32) { AtLeast(tb, "v", v, good, 0.99) },
		"AtLeast, the reference broken": func(tb testing.TB, v []float32) { AtLeast(tb, "v", good, v, 0.99) },
		"AtMost":                        func(tb testing.TB, v []float32) { AtMost(tb, "v", v, []float32{0, 0, 1}, 0.5) },
		"CheckVectors": func(tb testing.TB, v []float32) {
			CheckVectors(tb, []string{"a", "v"}, [][]float32{good, v}, [][]float32{good, good}, 0.99, "ref")
		},
		"MaxAbsDiff": func(tb testing.TB, v []float32) {
			if d := MaxAbsDiff(v, good); d > 1e-5 {
				tb.Errorf("max |Δ| %g", d)
			}
		},
	}
	for cname, check := range checks {
		for vname, v := range broken {
			// A vector of another norm is broken only for CheckUnit, and
			// for MaxAbsDiff, which compares values.
			if vname == "unit-less" && cname != "CheckUnit" && cname != "MaxAbsDiff" {
				continue
			}
			r := &recorder{TB: t}
			check(r, v)
			if len(r.errs) == 0 {
				t.Errorf("%s passed a vector that is %s: %v", cname, vname, v)
			}
		}
		r := &recorder{TB: t}
		check(r, good)
		if len(r.errs) != 0 {
			t.Errorf("%s failed a good vector: %v", cname, r.errs)
		}
	}
	r := &recorder{TB: t}
	if CheckVectors(r, []string{"a"}, nil, [][]float32{good}, 0.99, "ref"); len(r.errs) == 0 {
		t.Error("CheckVectors passed no vectors for one golden one")
	}
	r = &recorder{TB: t}
	if CheckVectors(r, nil, nil, nil, 0.99, "ref"); len(r.errs) == 0 {
		t.Error("CheckVectors passed an empty set")
	}
}
