package bert

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vaultask/vaultask/internal/simd"
	"github.com/vaultask/vaultask/tstest/corpustext"
	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t, "internal/simd", "internal/lowprio") }

// tinyConfig is a 32-wide, two-layer encoder of 16 positions.
var tinyConfig = Config{Hidden: 32, Heads: 4, FF: 64, MaxPos: 16, Eps: 1e-12, Begin: 0, End: 1}

const tinyVocab = 10

func randomQ4(rng *rand.Rand, rows, cols int) Linear {
	blocks := make([]byte, rows*cols/simd.BlockLen*simd.Q4Block18)
	for i := range blocks {
		blocks[i] = byte(rng.IntN(256))
		if i%simd.Q4Block18 == 1 {
			blocks[i] = 0x2c // scale about 0.06
		}
	}
	w, err := simd.PackQ4(blocks, rows, cols)
	if err != nil {
		panic(err)
	}
	return Q4(w)
}

func randomFloats(rng *rand.Rand, n int, base, spread float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = base + spread*(rng.Float32()*2-1)
	}
	return out
}

func tinyWeights(seed uint64) Weights {
	rng := rand.New(rand.NewPCG(seed, 1))
	H, FF := tinyConfig.Hidden, tinyConfig.FF
	word := randomFloats(rng, tinyVocab*H, 0, 1)
	w := Weights{
		Words: func(dst []float32, ids []int32) error {
			for i, id := range ids {
				copy(dst[i*H:(i+1)*H], word[int(id)*H:(int(id)+1)*H])
			}
			return nil
		},
		Pos: randomFloats(rng, tinyConfig.MaxPos*H, 0, 0.5), Type: randomFloats(rng, H, 0, 0.1),
		LnW: randomFloats(rng, H, 1, 0.2), LnB: randomFloats(rng, H, 0, 0.1),
	}
	for range 2 {
		w.Layers = append(w.Layers, Layer{
			QKV: randomQ4(rng, 3*H, H), AttnOut: randomQ4(rng, H, H), Inter: randomQ4(rng, FF, H), Out: randomQ4(rng, H, FF),
			QKVB: randomFloats(rng, 3*H, 0, 0.1), AttnOutB: randomFloats(rng, H, 0, 0.1),
			InterB: randomFloats(rng, FF, 0, 0.1), OutB: randomFloats(rng, H, 0, 0.1),
			AttnLnW: randomFloats(rng, H, 1, 0.2), AttnLnB: randomFloats(rng, H, 0, 0.1),
			OutLnW: randomFloats(rng, H, 1, 0.2), OutLnB: randomFloats(rng, H, 0, 0.1),
		})
	}
	return w
}

func mustTiny(tb testing.TB, pooling Pooling, workers int) *Encoder {
	tb.Helper()
	c := tinyConfig
	c.Pooling = pooling
	e, err := New(c, tinyWeights(7), workers)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func ids(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 2 + i*7%(tinyVocab-2)
	}
	return out
}

// TestWindowsWeighted checks a long text's vector is, with mean pooling,
// its windows' pooled vectors averaged by token counts: embedding each
// window alone and combining by hand must give the same vector. With CLS
// pooling it is the first window's vector alone.
func TestWindowsWeighted(t *testing.T) {
	for _, pooling := range []Pooling{Mean, CLS} {
		e := mustTiny(t, pooling, 2)
		text := ids(30) // windows of 14, 14, 2
		wins := e.windows(0, text)
		if pooling == CLS {
			if len(wins) != 1 || len(wins[0].ids) != 14 {
				t.Fatalf("CLS pooling, 30 tokens: %d windows, the first of %d tokens; want one of 14", len(wins), len(wins[0].ids))
			}
			// The whole text, and its first window alone, as texts.
			got, err := e.Embed(context.Background(), [][]int{text, text[:14]})
			if err != nil {
				t.Fatal(err)
			}
			corpustext.AtLeast(t, "CLS pooling: a long text's vector against its first window's", got[0], got[1], 0.999999)
			continue
		}
		if len(wins) != 3 || len(wins[2].ids) != 2 {
			t.Fatalf("windows of 30 tokens: %d, last %d tokens; want 3, 2", len(wins), len(wins[len(wins)-1].ids))
		}
		sum := make([]float32, e.Hidden)
		for _, w := range wins {
			b, _ := e.nextBatch([]window{w}, 0)
			pooled := make([]float32, e.Hidden)
			if err := e.forward(context.Background(), b, pooled); err != nil {
				t.Fatal(err)
			}
			for i, v := range pooled {
				sum[i] += float32(len(w.ids)) * v
			}
		}
		want := normalize(sum, 30)
		got, err := e.Embed(context.Background(), [][]int{text})
		if err != nil {
			t.Fatal(err)
		}
		corpustext.AtLeast(t, fmt.Sprintf("pooling %d: the windowed vector against the hand-made average", pooling), got[0], want, 0.999999)
	}
}

// TestCLSPooling: with CLS pooling a window's vector is its first token's
// state, which differs from the mean of its states.
func TestCLSPooling(t *testing.T) {
	text := [][]int{ids(5)}
	cls, err := mustTiny(t, CLS, 1).Embed(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	mean, err := mustTiny(t, Mean, 1).Embed(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	corpustext.AtMost(t, "CLS pooling's vector against mean pooling's (the same?)", cls[0], mean[0], 0.9999)
	e := mustTiny(t, CLS, 1)
	b, _ := e.nextBatch([]window{{ids: text[0]}}, 0)
	if b.ids[0] != int32(e.Begin) || b.ids[len(b.ids)-1] != int32(e.End) || len(b.ids) != 7 {
		t.Errorf("window's ids %v, want Begin, 5 ids, End", b.ids)
	}
}

// TestBatchesAlike: texts embedded in one call (shared passes, several
// workers, background threads) get the vectors they get alone.
func TestBatchesAlike(t *testing.T) {
	texts := [][]int{ids(3), ids(40), {}, ids(14), ids(1)}
	e := mustTiny(t, CLS, 1)
	var want [][]float32
	for _, text := range texts {
		v, err := e.Embed(context.Background(), [][]int{text})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, v[0])
	}
	bg := mustTiny(t, CLS, 3).Background()
	defer bg.Close()
	for name, enc := range map[string]*Encoder{"3 workers": mustTiny(t, CLS, 3), "background": bg} {
		got, err := enc.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d vectors for %d texts", name, len(got), len(want))
		}
		for i := range want {
			corpustext.AtLeast(t, fmt.Sprintf("%s: text %d against its vector alone", name, i), got[i], want[i], 0.99999)
		}
	}
}

func TestEmbedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := mustTiny(t, Mean, 1).Embed(ctx, [][]int{ids(3)}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestWordsError: a row the model cannot read (its file changed under the
// process) fails the call with that error, on any number of workers and on
// the background threads, and the encoder embeds again once it can.
func TestWordsError(t *testing.T) {
	changed := errors.New("the file changed")
	bg := mustTiny(t, Mean, 3).Background()
	defer bg.Close()
	for name, e := range map[string]*Encoder{"1 worker": mustTiny(t, Mean, 1), "3 workers": mustTiny(t, Mean, 3), "background": bg} {
		words := e.Words
		var fail atomic.Bool
		e.Words = func(dst []float32, ids []int32) error {
			if fail.Load() && slices.Contains(ids, 9) {
				return changed
			}
			return words(dst, ids)
		}
		texts := [][]int{ids(40), {9}}
		want, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		fail.Store(true)
		if _, err := e.Embed(context.Background(), texts); !errors.Is(err, changed) {
			t.Errorf("%s: Embed with a row it cannot read = %v, want its error", name, err)
		}
		fail.Store(false)
		got, err := e.Embed(context.Background(), texts)
		if err != nil || !slices.Equal(got[1], want[1]) {
			t.Errorf("%s: Embed once the rows read again = %v", name, err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *Config, w *Weights)
		want string
	}{
		{"heads", func(c *Config, _ *Weights) { c.Heads = 5 }, "not divisible by 5 heads"},
		{"positions", func(c *Config, _ *Weights) { c.MaxPos = 20 }, "do not fit 20 positions"},
		{"word", func(_ *Config, w *Weights) { w.Words = nil }, "no word embeddings"},
		{"ffn", func(c *Config, _ *Weights) { c.FF = 96 }, "intermediate weights are not 96×32"},
		{"bias", func(_ *Config, w *Weights) { w.Layers[1].QKVB = w.Layers[1].QKVB[:32] }, "layer 1: query-key-value"},
		{"norm", func(_ *Config, w *Weights) { w.Layers[0].OutLnB = nil }, "layer 0: a LayerNorm has 0 values"},
	}
	for _, tt := range tests {
		c, w := tinyConfig, tinyWeights(1)
		tt.edit(&c, &w)
		if _, err := New(c, w, 1); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	v := normalize([]float32{3, 0, 4}, 2)
	if !slices.Equal(v, []float32{0.6, 0, 0.8}) {
		t.Errorf("normalize = %v", v)
	}
	if z := normalize([]float32{0, 0}, 0); z[0] != 0 || z[1] != 0 {
		t.Errorf("normalize(zero) = %v, want zeros", z)
	}
}
