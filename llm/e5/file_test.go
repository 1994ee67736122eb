package e5

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/tstest/corpustext"
)

// tinyPieces is the vocabulary of tinyFile's model.
var tinyPieces = []string{"<s>", "<pad>", "</s>", "<unk>", "▁", "▁a", "b", "▁ab", "c", "a", "▁the", "é"}

// tinyFile builds a valid E5S1 file of a tiny model (hidden 32, one layer,
// two heads, 16 positions) with random weights, in the layout e5.c reads.
func tinyFile(tb testing.TB) []byte {
	tb.Helper()
	const H, FF, maxPos = 32, 64, 16
	rng := rand.New(rand.NewPCG(9, 10))
	le := binary.LittleEndian
	var b []byte
	i32 := func(v int) { b = le.AppendUint32(b, uint32(int32(v))) }
	b = append(b, fileMagic...)
	i32(fileVersion)
	for _, v := range []int{H, 1, 2, FF, len(tinyPieces), maxPos, 1} {
		i32(v)
	}
	b = le.AppendUint32(b, math.Float32bits(1e-12))
	i32(32)
	// vocabulary: count, <s> <pad> </s> <unk>, blob length, offsets, scores, blob
	i32(len(tinyPieces))
	for _, v := range []int{0, 2, 1, 3} {
		i32(v)
	}
	blob := strings.Join(tinyPieces, "")
	b = le.AppendUint64(b, uint64(len(blob)))
	off := 0
	for _, p := range tinyPieces {
		i32(off)
		off += len(p)
	}
	i32(off)
	for i := range tinyPieces {
		b = le.AppendUint32(b, math.Float32bits(-float32(i)/2))
	}
	b = append(b, blob...)
	// normalization map: Å → A, U+3000 → space, U+FB01 (ﬁ) → f i
	var nm []byte
	for _, e := range [][]rune{{0xc5, 'A'}, {0x3000, ' '}, {0xfb01, 'f', 'i'}} {
		nm = le.AppendUint32(nm, uint32(e[0]))
		nm = append(nm, byte(len(e)-1))
		for _, r := range e[1:] {
			nm = le.AppendUint32(nm, uint32(r))
		}
	}
	i32(3)
	b = le.AppendUint32(b, uint32(len(nm)))
	b = append(b, nm...)
	// directory, then the tensors
	type ent struct {
		name  string
		dtype byte
		n     int
	}
	ents := []ent{{"emb.word", dtypeQ4, len(tinyPieces) * H}, {"emb.pos", dtypeF32, maxPos * H}, {"emb.type", dtypeF32, H},
		{"emb.ln.w", dtypeF32, H}, {"emb.ln.b", dtypeF32, H}}
	for _, m := range []struct {
		s    string
		n, r int
	}{{"q", H * H, H}, {"k", H * H, H}, {"v", H * H, H}, {"ao", H * H, H}, {"fi", FF * H, FF}, {"fo", H * FF, H}} {
		ents = append(ents, ent{"l0." + m.s + ".w", dtypeQ4, m.n}, ent{"l0." + m.s + ".b", dtypeF32, m.r})
	}
	for _, n := range []string{"aln.w", "aln.b", "oln.w", "oln.b"} {
		ents = append(ents, ent{"l0." + n, dtypeF32, H})
	}
	dirBytes := 4
	for _, e := range ents {
		dirBytes += 2 + len(e.name) + 1 + 4 + 16
	}
	data := len(b) + dirBytes
	i32(len(ents))
	var tensors []byte
	for _, e := range ents {
		size := 4 * e.n
		if e.dtype == dtypeQ4 {
			size = e.n / 32 * 18
		}
		b = le.AppendUint16(b, uint16(len(e.name)))
		b = append(b, e.name...)
		b = append(b, e.dtype)
		b = le.AppendUint32(b, uint32(e.n))
		b = le.AppendUint64(b, uint64(data+len(tensors)))
		b = le.AppendUint64(b, uint64(size))
		for k := 0; k < size; k++ {
			if e.dtype == dtypeQ4 && k%18 == 1 {
				tensors = append(tensors, 0x2c) // scale high byte: about 0.06
			} else if e.dtype == dtypeF32 && k%4 == 3 {
				tensors = append(tensors, 0x3f) // around 0.5 to 2
			} else {
				tensors = append(tensors, byte(rng.IntN(256)))
			}
		}
	}
	return append(b, tensors...)
}

func mustTiny(tb testing.TB, workers int) *builtin.Encoder {
	tb.Helper()
	m, err := parse(tinyFile(tb), bytes.NewReader(tinyFile(tb)), workers)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// tinyTokenizer is the tiny model's tokenizer.
func tinyTokenizer(tb testing.TB) *tokenizer {
	tb.Helper()
	m, _, err := read(tinyFile(tb), bytes.NewReader(tinyFile(tb)))
	if err != nil {
		tb.Fatal(err)
	}
	return &m.tok
}

func TestTinyModel(t *testing.T) {
	m := mustTiny(t, 2)
	if m.Dim() != 32 || m.MaxTokens() != 16 {
		t.Fatalf("Dim, MaxTokens = %d, %d; want 32, 16", m.Dim(), m.MaxTokens())
	}
	long := strings.TrimSpace(strings.Repeat("ab ", 40)) // 40 tokens: three windows of 14
	vecs, err := m.Embed(context.Background(), []string{"", "ab c", long, "ab c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 4 {
		t.Fatalf("%d vectors for 4 texts", len(vecs))
	}
	for i, v := range vecs {
		corpustext.CheckUnit(t, fmt.Sprintf("vector %d", i), v, 32, 1e-5)
	}
	corpustext.AtLeast(t, "the same text twice in one call", vecs[1], vecs[3], 0.99999)
	if got := m.TokenCount(long); got != 42 {
		t.Errorf("TokenCount(long) = %d, want 42", got)
	}
}

func TestEmbedCancelled(t *testing.T) {
	m := mustTiny(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"ab"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestParseErrors(t *testing.T) {
	good := tinyFile(t)
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "file truncated in header"},
		{"foreign", []byte("GGUF\x03\x00\x00\x00"), `magic "GGUF"`},
		{"version", mutate(func(b []byte) []byte { b[4] = 2; return b }), "version 2"},
		{"heads", mutate(func(b []byte) []byte { b[16] = 5; return b }), "not divisible by 5 heads"},
		{"block", mutate(func(b []byte) []byte { b[40] = 16; return b }), "quantization block 16"},
		{"truncated vocabulary", good[:100], "file truncated in vocabulary"},
		{"truncated tensors", good[:len(good)-10], "runs past the end"},
		{"vocab larger than embeddings", mutate(func(b []byte) []byte { b[24] = 5; return b }), "piece count 12 outside [4, 5]"},
	}
	for _, tt := range tests {
		_, err := parse(tt.file, bytes.NewReader(tt.file), 1)
		if err == nil || !errors.Is(err, errFormat) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: parse = %v, want an errFormat error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := Spec.Load(dir, builtin.Options{})
	if !errors.Is(err, builtin.ErrModelNotFound) || !strings.Contains(err.Error(), "vaultask fetch-model --dir "+dir+" e5") {
		t.Errorf("Load(empty dir) = %v, want ErrModelNotFound naming vaultask fetch-model --dir %s e5", err, dir)
	}
	if _, err := Spec.Load("", builtin.Options{}); err == nil {
		t.Error("Load with no directory: no error")
	}
	if err := os.WriteFile(filepath.Join(dir, fileName), []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := load(pinning(t, dir), dir, builtin.Options{}); err == nil || !strings.Contains(err.Error(), fileName) || !strings.Contains(err.Error(), "magic") {
		t.Errorf("Load(foreign file) = %v, want an error naming the file and its magic", err)
	}
	if err := os.WriteFile(filepath.Join(dir, fileName), tinyFile(t), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := load(pinning(t, dir), dir, builtin.Options{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Embed(context.Background(), []string{"ab"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// FuzzParse feeds the parser the tiny model's file with its header and
// vocabulary head replaced by the fuzzer's bytes: it must return a model or
// an error, never panic, and a model it returns must embed.
func FuzzParse(f *testing.F) {
	good := tinyFile(f)
	const head = 160
	f.Add(good[:head])
	f.Add(good[:40])
	f.Fuzz(func(t *testing.T, h []byte) {
		file := append(bytes.Clone(h[:min(len(h), head)]), good[min(len(h), head):]...)
		m, err := parse(file, bytes.NewReader(file), 1)
		if err != nil {
			if !errors.Is(err, errFormat) {
				t.Fatalf("parse error %v is not errFormat", err)
			}
			return
		}
		if _, err := m.Embed(context.Background(), []string{"ab c", ""}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBackgroundEmbedsAlike: the background model, on its pool of threads
// of the lowest priority, gives every vector the model gives, bit for bit,
// for one worker and for several.
func TestBackgroundEmbedsAlike(t *testing.T) {
	texts := []string{"ab c", strings.TrimSpace(strings.Repeat("ab ", 40)), "", "c c ab"}
	for _, workers := range []int{1, 3} {
		m := mustTiny(t, workers)
		want, err := m.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		bg := m.Background()
		got, err := bg.Embed(context.Background(), texts)
		if err := bg.Close(); err != nil {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(texts) {
			t.Fatalf("%d workers: %d vectors in the background for %d texts", workers, len(got), len(texts))
		}
		for i := range want {
			if corpustext.CheckVector(t, fmt.Sprintf("%d workers: text %d", workers, i), got[i], 32) && !slices.Equal(got[i], want[i]) {
				t.Errorf("%d workers: text %d embeds otherwise in the background", workers, i)
			}
		}
	}
}
