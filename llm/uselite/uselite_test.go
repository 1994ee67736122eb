package uselite

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/internal/simd"
	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/tstest/corpustext"
)

// modelDir is where the tests read the model: its folder in the built-in
// models' directory VAULTASK_MODELS__BUILTIN_DIR names, else in the
// default one. CI runs `vaultask fetch-model` first, which puts it there.
func modelDir() string {
	if dir := os.Getenv("VAULTASK_MODELS__BUILTIN_DIR"); dir != "" {
		return filepath.Join(dir, Spec.Dir)
	}
	return filepath.Join(builtin.DefaultDir(), Spec.Dir)
}

var testModels sync.Map // kernel name → *Model

// mustModel returns the model running on kern, loaded once per test binary.
// It fails the test when the model files are missing: there is no skipping.
func mustModel(tb testing.TB, kern simd.Kernel) *Model {
	tb.Helper()
	if m, ok := testModels.Load(kern.Name); ok {
		return m.(*Model)
	}
	m, err := load(&Spec, modelDir(), kern)
	if err != nil {
		tb.Fatalf("%v\nThe tests need the model: run vaultask fetch-model (or set VAULTASK_MODELS__BUILTIN_DIR).", err)
	}
	testModels.Store(kern.Name, m)
	return m
}

func mustDefaultModel(tb testing.TB) *Model {
	tb.Helper()
	return mustModel(tb, simd.Kernels[0])
}

// reference is testdata/tfjs-reference-vectors.json: inputs, their token ids
// and vectors from the official TF.js runtime, all embedded in one batch.
type reference struct {
	Inputs []string    `json:"s"`
	Tokens [][]int     `json:"tok"`
	Vecs   [][]float32 `json:"e"`
}

func mustReference(tb testing.TB) reference {
	tb.Helper()
	raw, err := os.ReadFile("testdata/tfjs-reference-vectors.json")
	if err != nil {
		tb.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(raw, &ref); err != nil {
		tb.Fatal(err)
	}
	if len(ref.Inputs) == 0 || len(ref.Tokens) != len(ref.Inputs) || len(ref.Vecs) != len(ref.Inputs) {
		tb.Fatalf("reference: %d inputs, %d token lists, %d vectors", len(ref.Inputs), len(ref.Tokens), len(ref.Vecs))
	}
	return ref
}

func mustEmbed(tb testing.TB, m *Model, texts ...string) [][]float32 {
	tb.Helper()
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		tb.Fatal(err)
	}
	if len(vecs) != len(texts) {
		tb.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs
}

// maxAbsDiff is corpustext's: +Inf for vectors of other lengths, an empty
// one or a value that is not finite, so that a bound on it fails them.
var maxAbsDiff = corpustext.MaxAbsDiff

// TestGolden checks the tokenizer and every kernel this CPU runs against
// TF.js, feeding the inputs raw (no white-space collapsing, no windowing:
// TF.js drops tokens past 128) and in one batch, as the reference run did.
func TestGolden(t *testing.T) {
	ref := mustReference(t)
	for _, kern := range simd.Kernels {
		t.Run(kern.Name, func(t *testing.T) {
			m := mustModel(t, kern)
			for i, s := range ref.Inputs {
				if got := m.tok.encode(s); !slices.Equal(got, ref.Tokens[i]) {
					t.Errorf("encode(%q) =\n%v, TF.js:\n%v", s, got, ref.Tokens[i])
				}
			}
			vecs, err := m.embedWindows(context.Background(), ref.Tokens)
			if err != nil {
				t.Fatal(err)
			}
			if len(vecs) != len(ref.Vecs) {
				t.Fatalf("%d vectors for %d inputs", len(vecs), len(ref.Vecs))
			}
			var worst float64
			for i, v := range vecs {
				d := maxAbsDiff(v, ref.Vecs[i])
				if d > 1e-5 {
					t.Errorf("input %d %.40q: max |Δ| = %.3g vs TF.js, want ≤ 1e-5", i, ref.Inputs[i], d)
				}
				worst = max(worst, d)
			}
			t.Logf("max |Δ| vs TF.js over %d inputs: %.3g", len(vecs), worst)
		})
	}
}

func TestSemanticOrdering(t *testing.T) {
	m := mustDefaultModel(t)
	tests := []struct{ query, near, far string }{
		{"how do I reset my password", "account recovery steps", "banana bread recipe"},
		{"What is the capital of France?", "Paris is the capital and largest city of France.", "How many legs does a spider have?"},
		{"my dog won't stop barking at night", "Nighttime barking in puppies often comes from boredom or anxiety; more evening walks help.",
			"Q3 financial results: sales grew 12 percent to 4.1 million dollars."},
		{"git undo last commit", "Use git reset --soft HEAD~1 to remove the latest commit but keep the changes staged.",
			"Mash three ripe bananas, mix with flour, sugar, butter and an egg, then bake the loaf for an hour."},
	}
	for _, tt := range tests {
		v := mustEmbed(t, m, tt.query, tt.near, tt.far)
		near := corpustext.AtLeast(t, tt.query+" against "+tt.near, v[0], v[1], -1)
		far := corpustext.AtLeast(t, tt.query+" against "+tt.far, v[0], v[2], -1)
		if !(near > far) {
			t.Errorf("%q: cos to %q = %.3f, not above cos to %q = %.3f", tt.query, tt.near, near, tt.far, far)
		}
	}
}

func TestWindows(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 129, 200, 256, 257, 1000} {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		wins := windows(ids)
		want := max(1, (n+maxTokens-1)/maxTokens)
		if len(wins) != want {
			t.Errorf("windows(%d ids): %d windows, want %d", n, len(wins), want)
		}
		var joined []int
		for _, w := range wins {
			if len(w) > maxTokens || len(w) < len(wins[0])-1 || len(w) > len(wins[0]) {
				t.Errorf("windows(%d ids): lengths not within one of each other under %d: %d vs %d", n, maxTokens, len(w), len(wins[0]))
			}
			joined = append(joined, w...)
		}
		if !slices.Equal(joined, ids) {
			t.Errorf("windows(%d ids) do not join back into the ids", n)
		}
	}
}

func TestGrouped(t *testing.T) {
	lens := func(ns ...int) [][]int {
		wins := make([][]int, len(ns))
		for i, n := range ns {
			wins[i] = make([]int, n)
		}
		return wins
	}
	tests := []struct {
		name    string
		wins    [][]int
		workers int
		want    [][2]int
	}{
		{"none", nil, 2, nil},
		{"one query", lens(8), 2, [][2]int{{0, 1}}},
		{"two chunks on two workers", lens(100, 100, 100, 100), 2, [][2]int{{0, 2}, {2, 4}}},
		{"empty windows count", lens(0, 0, 0), 1, [][2]int{{0, 3}}},
		{"capped", lens(128, 128, 128, 100, 28), 1, [][2]int{{0, 2}, {2, 5}}},
	}
	for _, tt := range tests {
		if got := grouped(tt.wins, tt.workers); !slices.Equal(got, tt.want) {
			t.Errorf("%s: grouped = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestEmbedLongTextAveragesWindowsByLength(t *testing.T) {
	m := mustDefaultModel(t)
	ref := mustReference(t)
	long := strings.Repeat(ref.Inputs[4], 5) // about 300 tokens
	ids := m.Tokenize(long)
	wins := windows(ids)
	if len(wins) < 3 {
		t.Fatalf("%d tokens make %d windows; want a text of 3 or more", len(ids), len(wins))
	}
	got := mustEmbed(t, m, long)[0]

	parts, err := m.embedWindows(context.Background(), wins)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, Dim)
	for i, p := range parts {
		for c, v := range p {
			want[c] += float32(len(wins[i])) * v
		}
	}
	normalize(want)
	if d := maxAbsDiff(got, want); d > 1e-6 {
		t.Errorf("Embed(long) differs from the length-weighted mean of its windows by %.3g", d)
	}
	corpustext.CheckUnit(t, "Embed(long)", got, Dim, 1e-5)
	clipped, err := m.embedWindows(context.Background(), [][]int{ids})
	if err != nil {
		t.Fatal(err)
	}
	corpustext.AtMost(t, "the windowed vector against the first-128-tokens vector (the tail dropped?)", got, clipped[0], 1-1e-4)
}

func TestEmbedEmpty(t *testing.T) {
	m := mustDefaultModel(t)
	ref := mustReference(t)
	if ref.Inputs[0] != "" {
		t.Fatalf("reference input 0 is %q, want the empty string", ref.Inputs[0])
	}
	for _, s := range []string{"", " ", " \t\n "} {
		v := mustEmbed(t, m, s)[0]
		if d := maxAbsDiff(v, ref.Vecs[0]); d > 1e-5 {
			t.Errorf("Embed(%q) differs from TF.js's empty-string vector by %.3g", s, d)
		}
	}
	vecs, err := m.Embed(context.Background(), nil)
	if err != nil || len(vecs) != 0 {
		t.Errorf("Embed(nil) = %d vectors, %v; want none, nil", len(vecs), err)
	}
}

func TestTokenizeCollapsesWhiteSpace(t *testing.T) {
	m := mustDefaultModel(t)
	want := m.tok.encode("tab separated new line")
	for _, s := range []string{"tab\tseparated\nnew line", "  tab  separated\r\n\tnew\u00a0line \n"} {
		if got := m.Tokenize(s); !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %v, want %v", s, got, want)
		}
	}
	if slices.Contains(want, unkID) {
		t.Errorf("plain words tokenize with unk: %v", want)
	}
}

// batchTexts mixes lengths: empty, short, one window and several.
func batchTexts(tb testing.TB) []string {
	ref := mustReference(tb)
	texts := slices.Clone(ref.Inputs)
	return append(texts, strings.Repeat(ref.Inputs[4], 4), "how do I reset my password", strings.Repeat("word ", 300))
}

func TestEmbedBatchEqualsOneByOne(t *testing.T) {
	m := mustDefaultModel(t)
	texts := batchTexts(t)
	batch := mustEmbed(t, m, texts...)
	for i, s := range texts {
		one := mustEmbed(t, m, s)[0]
		if d := maxAbsDiff(batch[i], one); d > 1e-6 {
			t.Errorf("text %d %.40q: batched and alone differ by %.3g", i, s, d)
		}
	}
}

func TestEmbedConcurrent(t *testing.T) {
	m := mustDefaultModel(t)
	texts := batchTexts(t)
	want := mustEmbed(t, m, texts...)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			// Each goroutine embeds a different slice of the texts.
			lo := g % len(texts)
			got, err := m.Embed(context.Background(), texts[lo:])
			if err != nil {
				t.Error(err)
				return
			}
			if len(got) != len(texts)-lo {
				t.Errorf("goroutine %d: %d vectors for %d texts", g, len(got), len(texts)-lo)
			}
			for i := range got {
				if d := maxAbsDiff(got[i], want[lo+i]); d > 1e-6 {
					t.Errorf("goroutine %d, text %d: differs by %.3g", g, lo+i, d)
				}
			}
		})
	}
	wg.Wait()
}

func TestEmbedCanceled(t *testing.T) {
	m := mustDefaultModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"some text"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a canceled context: err = %v, want context.Canceled", err)
	}
}

func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := Spec.Load(dir, builtin.Options{})
	if !errors.Is(err, builtin.ErrModelNotFound) {
		t.Fatalf("Load(empty dir) err = %v, want ErrModelNotFound", err)
	}
	for _, want := range []string{dir, "vaultask fetch-model --dir " + dir + " use-lite"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load(empty dir) error %q does not mention %q", err, want)
		}
	}
}

// TestLoadDamaged: a model file that is not the pinned one (a vocabulary
// cut short, a shard with floats overwritten) is refused, naming it and
// the command that fetches it again; before the sums were checked, they
// loaded and embedded wrong.
func TestLoadDamaged(t *testing.T) {
	src := modelDir()
	for _, damaged := range []string{"vocab.json", "group1-shard3of7"} {
		builtinDir := t.TempDir()
		dir := filepath.Join(builtinDir, Spec.Dir)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range Spec.Files {
			b, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				t.Fatalf("%v\nThe tests need the model: run vaultask fetch-model (or set VAULTASK_MODELS__BUILTIN_DIR).", err)
			}
			switch {
			case name != damaged:
			case name == "vocab.json":
				b = append(b[:len(b)/2:len(b)/2], "]"...)
			default:
				for i := len(b) / 2; i < len(b)/2+4096; i++ {
					b[i] ^= 0x11
				}
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Spec.Load(dir, builtin.Options{})
		if !errors.Is(err, modelfile.ErrMismatch) || !strings.Contains(err.Error(), damaged+" does not match its pinned sum") || !strings.Contains(err.Error(), "run vaultask fetch-model --dir "+builtinDir+" use-lite to fetch it again") {
			t.Errorf("Load with %s damaged = %v, want ErrMismatch naming it and the fetch", damaged, err)
		}
	}
}
