package bge

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/tstest/corpustext"
	"github.com/vaultask/vaultask/tstest/deptest"
	"github.com/vaultask/vaultask/tstest/inplace"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "internal/simd", "internal/modelfetch", "internal/modelfile", "llm/builtin", "llm/internal/bert")
}

// modelDir is where the tests look for the model: its folder in the
// built-in models' directory VAULTASK_MODELS__BUILTIN_DIR names (where
// `vaultask fetch-model` puts it), else in the default one.
func modelDir() string {
	if d := os.Getenv("VAULTASK_MODELS__BUILTIN_DIR"); d != "" {
		return filepath.Join(d, Spec.Dir)
	}
	return filepath.Join(builtin.DefaultDir(), Spec.Dir)
}

var loadShared = sync.OnceValues(func() (*builtin.Encoder, error) { return load(&Spec, modelDir(), builtin.Options{}) })

// mustModel returns the model shared by the tests. Without the model files
// it skips, naming the command that fetches them, unless
// VAULTASK_REQUIRE_MODELS=1 (scripts/test.sh sets it), where it fails.
func mustModel(tb testing.TB) *builtin.Encoder {
	tb.Helper()
	m, err := loadShared()
	if errors.Is(err, builtin.ErrModelNotFound) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1" {
		tb.Skipf("%v; vaultask fetch-model bge fetches it", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func TestLoadMissing(t *testing.T) {
	builtinDir := t.TempDir()
	dir := filepath.Join(builtinDir, Spec.Dir)
	_, err := Spec.Load(dir, builtin.Options{})
	if !errors.Is(err, builtin.ErrModelNotFound) || !strings.Contains(err.Error(), "vaultask fetch-model --dir "+builtinDir+" bge)") {
		t.Errorf("Load(missing dir) = %v, want ErrModelNotFound naming vaultask fetch-model --dir %s bge", err, builtinDir)
	}
	if _, err := Spec.Load("", builtin.Options{}); err == nil {
		t.Error("Load with no directory: no error")
	}
}

// copyTokenizer puts the real tokenizer.json into dir, so that Load gets
// as far as the ONNX file.
func copyTokenizer(t *testing.T, dir string) {
	t.Helper()
	mustModel(t)
	b, err := os.ReadFile(filepath.Join(modelDir(), tokenizerName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tokenizerName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pinning is the model's spec with the sums of the files in dir named, as
// they are, in place of the pinned ones: a test loads files of its own
// through the real path.
func pinning(t *testing.T, dir string, names ...string) *builtin.Spec {
	t.Helper()
	text := checksums
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(text, "SHA256 ("+name+") = ")
		if i < 0 {
			t.Fatalf("checksums.txt pins no %s", name)
		}
		i += len("SHA256 (" + name + ") = ")
		text = text[:i] + fmt.Sprintf("%x", sha256.Sum256(b)) + text[i+64:]
	}
	s := Spec
	s.Sums = modelfile.MustParse(text)
	return &s
}

// TestLoadCorrupt: a missing, empty, foreign, truncated or damaged ONNX
// file is a clear error naming the file, never a panic, whatever its sum.
func TestLoadCorrupt(t *testing.T) {
	dir := t.TempDir()
	copyTokenizer(t, dir)
	path := filepath.Join(dir, fileName)
	if _, err := Spec.Load(dir, builtin.Options{}); !errors.Is(err, builtin.ErrModelNotFound) || !strings.Contains(err.Error(), fileName) {
		t.Errorf("Load without the ONNX file = %v, want ErrModelNotFound naming it", err)
	}
	real, err := os.ReadFile(filepath.Join(modelDir(), fileName))
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
		{"empty", nil, "not a valid ONNX model file: no graph"},
		{"foreign", []byte("GGUF\x03\x00\x00\x00 not an onnx file"), "not a valid ONNX model file"},
		{"truncated", real[:len(real)/2], "truncated"},
		{"damaged", damaged, "not a valid ONNX model file"},
		{"another model", tinyONNX(), "encoder layers, bge-small-en-v1.5 has 12"},
	}
	for _, tt := range tests {
		if err := os.WriteFile(path, tt.file, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := load(pinning(t, dir, fileName), dir, builtin.Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Load = %v, want an error naming %s and containing %q", tt.name, err, path, tt.want)
		}
	}
}

// TestLoadDamaged: model files that still parse but are not the pinned
// ones (a tokenizer cut to 1,000 words, an ONNX file with floats
// overwritten) are refused, naming the file and the command that fetches it
// again; before the sums were checked they loaded and embedded wrong.
func TestLoadDamaged(t *testing.T) {
	src := modelDir()
	mustModel(t)
	onnx, err := os.ReadFile(filepath.Join(src, fileName))
	if err != nil {
		t.Fatal(err)
	}
	tokJSON, err := os.ReadFile(filepath.Join(src, tokenizerName))
	if err != nil {
		t.Fatal(err)
	}
	var tj map[string]any
	if err := json.Unmarshal(tokJSON, &tj); err != nil {
		t.Fatal(err)
	}
	model := tj["model"].(map[string]any)
	kept := map[string]any{}
	for word, id := range model["vocab"].(map[string]any) {
		if id.(float64) < 1000 {
			kept[word] = id
		}
	}
	model["vocab"] = kept
	cut, err := json.Marshal(tj)
	if err != nil {
		t.Fatal(err)
	}
	// Floats in the middle of the file, which is mostly the layers' raw
	// weights, overwritten with others.
	floats := slices.Clone(onnx)
	for i := len(floats) / 2; i < len(floats)/2+4096; i += 4 {
		binary.LittleEndian.PutUint32(floats[i:], math.Float32bits(0.5))
	}
	tests := []struct {
		name, file string
		tok, onnx  []byte
	}{
		{"a tokenizer cut to 1,000 words", tokenizerName, cut, onnx},
		{"an ONNX file with floats overwritten", fileName, tokJSON, floats},
	}
	for _, tt := range tests {
		builtinDir := t.TempDir()
		dir := filepath.Join(builtinDir, Spec.Dir)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{tokenizerName: tt.tok, fileName: tt.onnx} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Spec.Load(dir, builtin.Options{})
		want := filepath.Join(dir, tt.file) + " does not match its pinned sum"
		if !errors.Is(err, modelfile.ErrMismatch) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "run vaultask fetch-model --dir "+builtinDir+" bge to fetch it again") {
			t.Errorf("%s: Load = %v, want ErrMismatch containing %q and naming the fetch", tt.name, err, want)
		}
		// The files parse: the sums are what refuses them.
		if m, err := load(pinning(t, dir, tokenizerName, fileName), dir, builtin.Options{}); err != nil {
			t.Errorf("%s: the file does not parse (%v): the test proves nothing of the sums", tt.name, err)
		} else {
			m.Close()
		}
	}
}

// TestFileRewrittenUnderTheModel: the ONNX file cut short under a loaded
// model, then copied over in place as cp does. The word table stayed
// mapped, so the next Embed read past the end of the file and the process
// died (SIGBUS); now the calls fail, on the model and its background view,
// naming the fetch, and embed as before once the file is the pinned one
// again.
func TestFileRewrittenUnderTheModel(t *testing.T) {
	mustModel(t)
	dir := t.TempDir()
	for _, name := range []string{tokenizerName, fileName} {
		inplace.Copy(t, filepath.Join(modelDir(), name), filepath.Join(dir, name))
	}
	m, err := load(&Spec, dir, builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	bg := m.Background()
	defer bg.Close()
	ctx := context.Background()
	texts := []string{"how do I sync my vault between two phones?", "CouchDB keeps the chunks."}
	want, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fileName)
	if err := os.Truncate(path, 1<<20); err != nil {
		t.Fatal(err)
	}
	for _, model := range []builtin.Model{m, bg} {
		if _, err := model.Embed(ctx, texts); !errors.Is(err, modelfile.ErrChanged) || !strings.Contains(err.Error(), "run vaultask fetch-model --dir "+dir+" bge") {
			t.Errorf("Embed with the ONNX file cut short = %v, want ErrChanged naming the fetch", err)
		}
	}
	inplace.Copy(t, filepath.Join(modelDir(), fileName), path)
	for _, model := range []builtin.Model{m, bg} {
		got, err := model.Embed(ctx, texts)
		if err != nil {
			t.Fatalf("Embed once the file is copied back: %v", err)
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("text %d embeds otherwise once the file is copied back", i)
			}
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
// is that window's (the vector of its head alone, itself past one window
// and tokenized as the text's first tokens), and not that of a window
// further on (its tail alone), which speaks of something else.
func TestWindows(t *testing.T) {
	m := mustModel(t)
	head := strings.Repeat("The vault keeps every note in CouchDB, split into chunks. ", 50)
	tail := strings.Repeat("Tomatoes want sun, water at the roots and a stake to climb. ", 50)
	ids, headIDs := m.Tokenize(head+tail), m.Tokenize(head)
	if len(headIDs) <= 510 || !slices.Equal(headIDs[:510], ids[:510]) || len(m.Tokenize(tail)) <= 510 {
		t.Fatalf("the head's %d tokens do not start the text's %d, or the head or tail is not past one window", len(headIDs), len(ids))
	}
	got, err := m.Embed(context.Background(), []string{head + tail})
	if err != nil {
		t.Fatal(err)
	}
	wins, err := m.Embed(context.Background(), []string{head, tail})
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
		var model builtin.Model = m
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
