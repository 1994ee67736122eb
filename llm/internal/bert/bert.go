package bert

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/vaultask/vaultask/internal/lowprio"
	"github.com/vaultask/vaultask/internal/simd"
)

// Pooling is how a window's token states become its vector.
type Pooling int

const (
	// Mean averages the window's final hidden states (e5).
	Mean Pooling = iota
	// CLS takes the first token's final hidden state (BGE). A [CLS]
	// vector sums up the window it opens, and the model was trained on
	// texts cut at one window, so a text past it is embedded by its first
	// window alone, as the model's own pipeline cuts it
	// (sentence-transformers' max_seq_length): averaging the windows'
	// [CLS] vectors measured worse (bge-small on the help questions,
	// vector search alone: MRR 0.634 against 0.659).
	CLS
)

// Config is the encoder's shape and the ids put around each window.
type Config struct {
	Hidden, Heads, FF int
	// MaxPos is the tokens a window holds, Begin and End included.
	MaxPos int
	// Eps is the LayerNorms' epsilon.
	Eps float32
	// Begin and End are the ids put before and after each window's
	// content tokens ([CLS] and [SEP], or <s> and </s>).
	Begin, End int
	Pooling    Pooling
}

// Linear is a weight matrix of Rows()×Cols() on Q8 activations: MatMul
// writes the row groups [g0, g1) (simd.RowGroup rows each) of y = a·Wᵀ +
// bias, y having ldy values a row, as simd.MatMulQ4Q8 does.
type Linear interface {
	Rows() int
	Cols() int
	MatMul(y []float32, ldy int, bias []float32, a *simd.Q8, g0, g1 int)
}

// Q4 is a Q4_0 matrix as a Linear.
func Q4(w *simd.Q4) Linear { return q4{w} }

type q4 struct{ *simd.Q4 }

func (w q4) MatMul(y []float32, ldy int, bias []float32, a *simd.Q8, g0, g1 int) {
	simd.MatMulQ4Q8(y, ldy, w.Q4, bias, a, g0, g1)
}

// Layer is one encoder layer. The query, key and value products share one
// matrix of 3·Hidden rows (query, then key, then value), so one pass
// computes all three.
type Layer struct {
	QKV, AttnOut, Inter, Out         Linear
	QKVB, AttnOutB, InterB, OutB     []float32
	AttnLnW, AttnLnB, OutLnW, OutLnB []float32
}

// Weights are the encoder's parameters.
type Weights struct {
	// Words writes the rows of the word embeddings of ids into dst
	// (len(ids) rows of Hidden values). The table may stay on disk, in any
	// encoding; an error reading it (the file changed under the process)
	// fails the call.
	Words func(dst []float32, ids []int32) error
	// Pos is MaxPos rows of position embeddings, Type token type 0's row.
	Pos, Type, LnW, LnB []float32
	Layers              []Layer
}

// Encoder is a loaded encoder. It is safe for concurrent use; concurrent
// calls each use their own scratch.
type Encoder struct {
	Config
	Weights
	// Workers is the number of goroutines a call's matrix products,
	// attention and quantization are split across.
	Workers int
	pool    sync.Pool // *scratch
	// low, when not nil, runs the calls' parallel work on threads of the
	// lowest priority (see Background).
	low *lowprio.Pool
}

// New checks the weights against the shape and returns the encoder;
// workers ≤ 0 means GOMAXPROCS.
func New(c Config, w Weights, workers int) (*Encoder, error) {
	if err := check(c, w); err != nil {
		return nil, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &Encoder{Config: c, Weights: w, Workers: workers}, nil
}

func check(c Config, w Weights) error {
	H := c.Hidden
	switch {
	case H <= 0 || c.Heads <= 0 || H%c.Heads != 0:
		return fmt.Errorf("bert: hidden size %d is not divisible by %d heads", H, c.Heads)
	case H%simd.BlockLen != 0 || c.FF%simd.BlockLen != 0 || c.FF <= 0:
		return fmt.Errorf("bert: hidden %d and feed-forward %d sizes must be positive multiples of %d", H, c.FF, simd.BlockLen)
	case c.MaxPos < 3:
		return fmt.Errorf("bert: %d positions leave no room for a token between the window's ends", c.MaxPos)
	case w.Words == nil:
		return fmt.Errorf("bert: no word embeddings")
	case len(w.Pos) != c.MaxPos*H || len(w.Type) != H || len(w.LnW) != H || len(w.LnB) != H:
		return fmt.Errorf("bert: embedding tables of %d, %d, %d, %d values do not fit %d positions of %d", len(w.Pos), len(w.Type), len(w.LnW), len(w.LnB), c.MaxPos, H)
	}
	for l, ly := range w.Layers {
		if err := checkLayer(c, ly); err != nil {
			return fmt.Errorf("bert: layer %d: %w", l, err)
		}
	}
	return nil
}

func checkLayer(c Config, ly Layer) error {
	H, FF := c.Hidden, c.FF
	mats := []struct {
		name       string
		w          Linear
		b          []float32
		rows, cols int
	}{
		{"query-key-value", ly.QKV, ly.QKVB, 3 * H, H},
		{"attention output", ly.AttnOut, ly.AttnOutB, H, H},
		{"intermediate", ly.Inter, ly.InterB, FF, H},
		{"output", ly.Out, ly.OutB, H, FF},
	}
	for _, m := range mats {
		if m.w == nil || m.w.Rows() != m.rows || m.w.Cols() != m.cols || len(m.b) != m.rows {
			return fmt.Errorf("%s weights are not %d×%d with %d biases", m.name, m.rows, m.cols, m.rows)
		}
	}
	for _, n := range [][]float32{ly.AttnLnW, ly.AttnLnB, ly.OutLnW, ly.OutLnB} {
		if len(n) != H {
			return fmt.Errorf("a LayerNorm has %d values, not %d", len(n), H)
		}
	}
	return nil
}

// Background is the encoder as a background embedder runs it: the same
// weights, its work spread over as many threads of the lowest priority
// (internal/lowprio), so that it takes only the CPU nothing else wants.
// Close it when done.
func (e *Encoder) Background() *Encoder {
	return &Encoder{Config: e.Config, Weights: e.Weights, Workers: e.Workers, low: lowprio.New(e.Workers)}
}

// Close stops a Background encoder's threads; for another it does nothing.
func (e *Encoder) Close() {
	if e.low != nil {
		e.low.Close()
	}
}
