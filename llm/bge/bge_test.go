package bge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/tstest/corpustext"
	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "internal/simd", "internal/mmapfile", "internal/modeldir", "llm/internal/bert")
}

// modelDir is where the tests look for the model: its folder in the
// built-in models' directory VAULTASK_MODELS__BUILTIN_DIR names (where
// scripts/fetch-model.sh puts it), else DefaultDir.
func modelDir() string {
	if d := os.Getenv("VAULTASK_MODELS__BUILTIN_DIR"); d != "" {
		return filepath.Join(d, DirName)
	}
	return DefaultDir()
}

var loadShared = sync.OnceValues(func() (*Model, error) { return Load(modelDir(), Options{}) })

// mustModel returns the model shared by the tests. Without the model files
// it skips, naming the script that fetches them, unless
// VAULTASK_REQUIRE_MODELS=1 (scripts/test.sh sets it), where it fails.
func mustModel(tb testing.TB) *Model {
	tb.Helper()
	m, err := loadShared()
	if errors.Is(err, ErrModelNotFound) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1" {
		tb.Skipf("%v; scripts/fetch-model.sh bge fetches it", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func TestLoadMissing(t *testing.T) {
	builtin := t.TempDir()
	dir := filepath.Join(builtin, DirName)
	_, err := Load(dir, Options{})
	if !errors.Is(err, ErrModelNotFound) || !strings.Contains(err.Error(), "scripts/fetch-model.sh bge "+builtin+")") {
		t.Errorf("Load(missing dir) = %v, want ErrModelNotFound naming scripts/fetch-model.sh bge %s", err, builtin)
	}
	if _, err := Load("", Options{}); err == nil {
		t.Error("Load with no directory: no error")
	}
}

// copyTokenizer puts the real tokenizer.json into dir, so that Load gets
// as far as the ONNX file.
func copyTokenizer(t *testing.T, dir string) {
	t.Helper()
	mustModel(t)
	b, err := os.ReadFile(filepath.Join(modelDir(), TokenizerName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, TokenizerName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadCorrupt: a missing, empty, foreign, truncated or damaged ONNX
// file is a clear error naming the file, never a panic.
func TestLoadCorrupt(t *testing.T) {
	dir := t.TempDir()
	copyTokenizer(t, dir)
	path := filepath.Join(dir, FileName)
	if _, err := Load(dir, Options{}); !errors.Is(err, ErrModelNotFound) || !strings.Contains(err.Error(), FileName) {
		t.Errorf("Load without the ONNX file = %v, want ErrModelNotFound naming it", err)
	}
	real, err := os.ReadFile(filepath.Join(modelDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	damaged := slices.Clone(real)
	// The word table's first bytes are the graph's initializer's header
	// somewhere before its data; overwriting the file's head breaks the
	// ModelProto itself.
	copy(damaged[:64], strings.Repeat("\xff", 64))
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "file is empty"},
		{"foreign", []byte("GGUF\x03\x00\x00\x00 not an onnx file"), "not a valid ONNX model file"},
		{"truncated", real[:len(real)/2], "truncated"},
		{"damaged", damaged, "not a valid ONNX model file"},
		{"another model", tinyONNX(), "encoder layers, bge-small-en-v1.5 has 12"},
	}
	for _, tt := range tests {
		if err := os.WriteFile(path, tt.file, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir, Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.name != "empty" && !strings.Contains(err.Error(), path)) {
			t.Errorf("%s: Load = %v, want an error naming %s and containing %q", tt.name, err, path, tt.want)
		}
	}
}

func TestModel(t *testing.T) {
	m := mustModel(t)
	if m.Dim() != 384 || m.MaxTokens() != 512 {
		t.Errorf("Dim, MaxTokens = %d, %d; want 384, 512", m.Dim(), m.MaxTokens())
	}
	if got := m.TokenCount("hello world"); got != 4 {
		t.Errorf(`TokenCount("hello world") = %d, want 4 ([CLS] hello world [SEP])`, got)
	}
	vecs, err := m.Embed(context.Background(), []string{"", "hello world"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 {
		t.Fatalf("%d vectors for 2 texts", len(vecs))
	}
	for i, v := range vecs {
		corpustext.CheckUnit(t, fmt.Sprintf("vector %d", i), v, 384, 1e-5)
	}
}

// TestWindows: a text past 512 tokens is embedded by its first window of
// 510 content tokens, as sentence-transformers cuts it for bge: its vector
// is that window's, and not that of a window further on, which speaks of
// something else.
func TestWindows(t *testing.T) {
	m := mustModel(t)
	head := strings.Repeat("The vault keeps every note in CouchDB, split into chunks. ", 50)
	tail := strings.Repeat("Tomatoes want sun, water at the roots and a stake to climb. ", 50)
	ids := m.tok.encode(head + tail)
	if len(ids) <= 2*510 {
		t.Fatalf("the long text has %d tokens, want more than two windows", len(ids))
	}
	got, err := m.Embed(context.Background(), []string{head + tail})
	if err != nil {
		t.Fatal(err)
	}
	wins, err := m.enc.Embed(context.Background(), [][]int{ids[:510], ids[len(ids)-510:]})
	if err != nil {
		t.Fatal(err)
	}
	corpustext.AtLeast(t, fmt.Sprintf("a %d-token text's vector against its first window's", len(ids)), got[0], wins[0], 0.99999)
	corpustext.AtMost(t, fmt.Sprintf("a %d-token text's vector against its last window's (the tail embedded too?)", len(ids)), got[0], wins[1], 0.9)
}

// TestConcurrentEmbed: calls from several goroutines at once (each with
// its own scratch), on the model and on its Background view, give each
// text the vector one call alone gives it, bit for bit.
func TestConcurrentEmbed(t *testing.T) {
	m := mustModel(t)
	texts := []string{"how do I sync my vault between two phones?", "", "CouchDB keeps the chunks.",
		strings.Repeat("a long note about LiveSync ", 60)}
	want, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	bg := m.Background()
	defer bg.Close()
	var wg sync.WaitGroup
	for g := range 4 {
		model := m
		if g%2 == 1 {
			model = bg
		}
		wg.Go(func() {
			// Rotated, so each goroutine batches the texts otherwise.
			mine := append(slices.Clone(texts[g:]), texts[:g]...)
			got, err := model.Embed(context.Background(), mine)
			if err != nil {
				t.Error(err)
				return
			}
			if len(got) != len(mine) {
				t.Errorf("goroutine %d: %d vectors for %d texts", g, len(got), len(mine))
				return
			}
			for i := range mine {
				corpustext.AtLeast(t, fmt.Sprintf("goroutine %d: text %d against its vector alone", g, (i+g)%len(texts)), got[i], want[(i+g)%len(texts)], 0.99999)
			}
		})
	}
	wg.Wait()
}

func TestEmbedCancelled(t *testing.T) {
	m := mustModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"hello"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got, want := DefaultDir(), "/x/cache/vaultask/bge-small-en-v1.5-"+Version; got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
}
