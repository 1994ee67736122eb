package bert

import (
	"cmp"
	"context"
	"math"
	"sync"

	"github.com/vaultask/vaultask/internal/simd"
)

// batch is one forward pass's input: the token ids of several segments
// (windows, each Begin … End) concatenated, with each token's position.
type batch struct {
	ids, pos []int32
	segs     []int // segment i is tokens segs[i]:segs[i+1]
}

// scratch holds one forward pass's buffers, kept in the Model's pool and
// grown, never shrunk, to the largest batch seen.
type scratch struct {
	x, qkv, ctx, out, mid []float32
	q8                    simd.Q8
	attn                  [][]float32 // per worker: scores and the head's Kᵀ, Vᵀ
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func (e *Encoder) scratch(T int) *scratch {
	s, _ := e.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	H := e.Hidden
	s.x = grow(s.x, T*H)
	s.qkv = grow(s.qkv, T*3*H)
	s.ctx = grow(s.ctx, T*H)
	s.out = grow(s.out, T*H)
	s.mid = grow(s.mid, T*e.FF)
	for len(s.attn) < max(1, e.Workers) {
		s.attn = append(s.attn, nil)
	}
	return s
}

// parallel runs fn over [0, n) split into at most e.Workers contiguous
// ranges, one goroutine each (worker w of them), and waits for them: on
// the threads of a Background model's pool, else on new goroutines.
func (e *Encoder) parallel(n int, fn func(w, lo, hi int)) {
	nw := min(e.Workers, n)
	if e.low != nil {
		fns := make([]func(), max(nw, 1))
		for i := range fns {
			lo, hi := i*n/len(fns), (i+1)*n/len(fns)
			fns[i] = func() { fn(i, lo, hi) }
		}
		e.low.Run(fns...)
		return
	}
	if nw <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for i := range nw {
		lo, hi := i*n/nw, (i+1)*n/nw
		wg.Go(func() { fn(i, lo, hi) })
	}
	wg.Wait()
}

// forward runs the encoder over b and writes each segment's pooled final
// hidden state into pooled (len(b.segs)-1 rows of hidden values).
// It stops between layers once ctx is done.
func (e *Encoder) forward(ctx context.Context, b batch, pooled []float32) error {
	T, H := len(b.ids), e.Hidden
	s := e.scratch(T)
	defer e.pool.Put(s)
	if err := e.embed(s.x, b); err != nil {
		return err
	}
	for l := range e.Layers {
		if err := ctx.Err(); err != nil {
			return err
		}
		e.layer(s, &e.Layers[l], b, T)
	}
	for i := range len(b.segs) - 1 {
		e.poolWindow(s.x, b.segs[i], b.segs[i+1], pooled[i*H:(i+1)*H])
	}
	return nil
}

// poolWindow writes the vector of the segment of tokens [t0, t1) of x into o:
// their mean, or the first one's state.
func (e *Encoder) poolWindow(x []float32, t0, t1 int, o []float32) {
	H := e.Hidden
	if e.Pooling == CLS {
		copy(o, x[t0*H:(t0+1)*H])
		return
	}
	clear(o)
	for t := t0; t < t1; t++ {
		for j, v := range x[t*H : (t+1)*H] {
			o[j] += v
		}
	}
	inv := 1 / float32(t1-t0)
	for j := range o {
		o[j] *= inv
	}
}

// embed writes each token's word row plus its position's row and token
// type 0's, layer-normed. It returns the first error reading the rows.
func (e *Encoder) embed(x []float32, b batch) error {
	H := e.Hidden
	var mu sync.Mutex
	var first error
	e.parallel(len(b.ids), func(_, lo, hi int) {
		if err := e.Words(x[lo*H:hi*H], b.ids[lo:hi]); err != nil {
			mu.Lock()
			first = cmp.Or(first, err)
			mu.Unlock()
			return
		}
		for t := lo; t < hi; t++ {
			r := x[t*H : (t+1)*H]
			p := e.Pos[int(b.pos[t])*H : (int(b.pos[t])+1)*H]
			for i := range r {
				r[i] += p[i] + e.Type[i]
			}
			layerNorm(r, e.LnW, e.LnB, e.Eps)
		}
	})
	return first
}

// layer runs one encoder layer on s.x in place.
func (e *Encoder) layer(s *scratch, ly *Layer, b batch, T int) {
	H := e.Hidden
	e.matmul(s, s.x, H, ly.QKV, ly.QKVB, s.qkv, T)
	e.attention(s, b)
	e.matmul(s, s.ctx, H, ly.AttnOut, ly.AttnOutB, s.out, T)
	e.addNorm(s.x, s.out, ly.AttnLnW, ly.AttnLnB, T)
	e.matmul(s, s.x, H, ly.Inter, ly.InterB, s.mid, T)
	e.parallel(T, func(_, lo, hi int) { simd.GELU(s.mid[lo*e.FF : hi*e.FF]) })
	e.matmul(s, s.mid, e.FF, ly.Out, ly.OutB, s.out, T)
	e.addNorm(s.x, s.out, ly.OutLnW, ly.OutLnB, T)
}

// matmul quantizes x (T×cols) and writes y = x·Wᵀ + bias (T×w.Rows()),
// the workers taking contiguous ranges of w's row groups.
func (e *Encoder) matmul(s *scratch, x []float32, cols int, w Linear, bias, y []float32, T int) {
	s.q8.Reset(T, cols)
	e.parallel(T, func(_, lo, hi int) { s.q8.QuantizeRows(x, lo, hi) })
	rows := w.Rows()
	e.parallel(rows/simd.RowGroup, func(_, lo, hi int) {
		w.MatMul(y, rows, bias, &s.q8, lo, hi)
	})
}

// addNorm sets x = LayerNorm(x + y) row by row.
func (e *Encoder) addNorm(x, y, w, b []float32, T int) {
	H := e.Hidden
	e.parallel(T, func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			r := x[t*H : (t+1)*H]
			for i, v := range y[t*H : (t+1)*H] {
				r[i] += v
			}
			layerNorm(r, w, b, e.Eps)
		}
	})
}

// attention writes into s.ctx each token's scaled dot-product attention
// over its own segment's tokens, head by head. The work items are
// (segment, head) pairs; for each, the head's keys are first transposed
// (Kᵀ: one row per head dimension) so that a query's scores are one pass of
// simd.Scores over the segment; the values are read in place.
func (e *Encoder) attention(s *scratch, b batch) {
	nseg, NH := len(b.segs)-1, e.Heads
	need := e.MaxPos * (2 + e.Hidden/e.Heads)
	e.parallel(nseg*NH, func(w, lo, hi int) {
		if len(s.attn[w]) < need {
			s.attn[w] = make([]float32, need)
		}
		buf := s.attn[w]
		for item := lo; item < hi; item++ {
			e.attendHead(s, b.segs[item/NH], b.segs[item/NH+1], item%NH, buf)
		}
	})
}

func (e *Encoder) attendHead(s *scratch, s0, s1, h int, buf []float32) {
	H, hd := e.Hidden, e.Hidden/e.Heads
	L := s1 - s0
	scores, scores1 := buf[:L], buf[e.MaxPos:e.MaxPos+L]
	kt := buf[2*e.MaxPos : 2*e.MaxPos+hd*L]
	// Eight keys at a time, so that both the rows read and the runs
	// written stay in the L1 cache.
	for j0 := 0; j0 < L; j0 += 8 {
		j1 := min(L, j0+8)
		for d := range hd {
			dst := kt[d*L+j0 : d*L+j1]
			for j := range dst {
				dst[j] = s.qkv[(s0+j0+j)*3*H+H+h*hd+d]
			}
		}
	}
	values := s.qkv[s0*3*H+2*H+h*hd:]
	scale := 1 / float32(math.Sqrt(float64(hd)))
	query := func(t int) []float32 { return s.qkv[t*3*H+h*hd : t*3*H+h*hd+hd] }
	ctx := func(t int) []float32 { return s.ctx[t*H+h*hd : t*H+h*hd+hd] }
	// Two queries at a time share each load of the keys and values.
	t := s0
	for ; t+1 < s1; t += 2 {
		simd.Scores2(scores, scores1, query(t), query(t+1), kt, L)
		inv0 := 1 / simd.Softmax(scores, scale)
		inv1 := 1 / simd.Softmax(scores1, scale)
		simd.WeightedSum2(ctx(t), ctx(t+1), scores, scores1, values, 3*H, inv0, inv1)
	}
	if t < s1 {
		simd.Scores(scores, query(t), kt, L)
		inv := 1 / simd.Softmax(scores, scale)
		simd.WeightedSum(ctx(t), scores, values, 3*H, inv)
	}
}
