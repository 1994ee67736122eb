package e5

import (
	"context"
	"math"
	"sync"

	"github.com/vaultask/vaultask/internal/simd"
)

// batch is one forward pass's input: the token ids of several segments
// (windows, each <s> … </s>) concatenated, with each token's position.
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

func (m *Model) scratch(T int) *scratch {
	s, _ := m.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	H := m.hidden
	s.x = grow(s.x, T*H)
	s.qkv = grow(s.qkv, T*3*H)
	s.ctx = grow(s.ctx, T*H)
	s.out = grow(s.out, T*H)
	s.mid = grow(s.mid, T*m.ff)
	for len(s.attn) < max(1, m.workers) {
		s.attn = append(s.attn, nil)
	}
	return s
}

// parallel runs fn over [0, n) split into at most m.workers contiguous
// ranges, one goroutine each (worker w of them), and waits for them: on
// the threads of a Background model's pool, else on new goroutines.
func (m *Model) parallel(n int, fn func(w, lo, hi int)) {
	nw := min(m.workers, n)
	if m.low != nil {
		fns := make([]func(), max(nw, 1))
		for i := range fns {
			lo, hi := i*n/len(fns), (i+1)*n/len(fns)
			fns[i] = func() { fn(i, lo, hi) }
		}
		m.low.Run(fns...)
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

// forward runs the encoder over b and writes each segment's mean-pooled
// final hidden state into pooled (len(b.segs)-1 rows of hidden values).
// It stops between layers once ctx is done.
func (m *Model) forward(ctx context.Context, b batch, pooled []float32) error {
	T, H := len(b.ids), m.hidden
	s := m.scratch(T)
	defer m.pool.Put(s)
	m.embed(s.x, b)
	for l := range m.layers {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.layer(s, &m.layers[l], b, T)
	}
	for i := range len(b.segs) - 1 {
		o := pooled[i*H : (i+1)*H]
		clear(o)
		for t := b.segs[i]; t < b.segs[i+1]; t++ {
			for j, v := range s.x[t*H : (t+1)*H] {
				o[j] += v
			}
		}
		inv := 1 / float32(b.segs[i+1]-b.segs[i])
		for j := range o {
			o[j] *= inv
		}
	}
	return nil
}

// embed writes each token's word row (dequantized from the mapped Q4
// table) plus its position's row and token type 0's, layer-normed.
func (m *Model) embed(x []float32, b batch) {
	H := m.hidden
	rowBytes := H / simd.BlockLen * simd.Q4Block18
	m.parallel(len(b.ids), func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			r := x[t*H : (t+1)*H]
			blocks := m.word[int(b.ids[t])*rowBytes : (int(b.ids[t])+1)*rowBytes]
			for k := range H / simd.BlockLen {
				blk := blocks[k*simd.Q4Block18:]
				d := simd.HalfToFloat(uint16(blk[0]) | uint16(blk[1])<<8)
				for j := range 16 {
					r[k*32+j] = float32(int(blk[2+j]&15)-8) * d
					r[k*32+16+j] = float32(int(blk[2+j]>>4)-8) * d
				}
			}
			p := m.pos[int(b.pos[t])*H : (int(b.pos[t])+1)*H]
			for i := range r {
				r[i] += p[i] + m.typ[i]
			}
			layerNorm(r, m.lnW, m.lnB, m.eps)
		}
	})
}

// layer runs one encoder layer on s.x in place.
func (m *Model) layer(s *scratch, ly *layer, b batch, T int) {
	H := m.hidden
	m.matmul(s, s.x, H, ly.qkv, ly.qkvB, s.qkv, T)
	m.attention(s, b)
	m.matmul(s, s.ctx, H, ly.ao, ly.aoB, s.out, T)
	m.addNorm(s.x, s.out, ly.attnLnW, ly.attnLnB, T)
	m.matmul(s, s.x, H, ly.fi, ly.fiB, s.mid, T)
	m.parallel(T, func(_, lo, hi int) { simd.GELU(s.mid[lo*m.ff : hi*m.ff]) })
	m.matmul(s, s.mid, m.ff, ly.fo, ly.foB, s.out, T)
	m.addNorm(s.x, s.out, ly.outLnW, ly.outLnB, T)
}

// matmul quantizes x (T×cols) and writes y = x·Wᵀ + bias (T×w.Rows()),
// the workers taking contiguous ranges of w's row groups.
func (m *Model) matmul(s *scratch, x []float32, cols int, w *simd.Q4, bias, y []float32, T int) {
	s.q8.Reset(T, cols)
	m.parallel(T, func(_, lo, hi int) { s.q8.QuantizeRows(x, lo, hi) })
	rows := w.Rows()
	m.parallel(rows/simd.RowGroup, func(_, lo, hi int) {
		simd.MatMulQ4Q8(y, rows, w, bias, &s.q8, lo, hi)
	})
}

// addNorm sets x = LayerNorm(x + y) row by row.
func (m *Model) addNorm(x, y, w, b []float32, T int) {
	H := m.hidden
	m.parallel(T, func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			r := x[t*H : (t+1)*H]
			for i, v := range y[t*H : (t+1)*H] {
				r[i] += v
			}
			layerNorm(r, w, b, m.eps)
		}
	})
}

// attention writes into s.ctx each token's scaled dot-product attention
// over its own segment's tokens, head by head. The work items are
// (segment, head) pairs; for each, the head's keys are first transposed
// (Kᵀ: one row per head dimension) so that a query's scores are one pass of
// simd.Scores over the segment; the values are read in place.
func (m *Model) attention(s *scratch, b batch) {
	nseg, NH := len(b.segs)-1, m.heads
	need := m.maxPos * (2 + m.hidden/m.heads)
	m.parallel(nseg*NH, func(w, lo, hi int) {
		if len(s.attn[w]) < need {
			s.attn[w] = make([]float32, need)
		}
		buf := s.attn[w]
		for item := lo; item < hi; item++ {
			m.attendHead(s, b.segs[item/NH], b.segs[item/NH+1], item%NH, buf)
		}
	})
}

func (m *Model) attendHead(s *scratch, s0, s1, h int, buf []float32) {
	H, hd := m.hidden, m.hidden/m.heads
	L := s1 - s0
	scores, scores1 := buf[:L], buf[m.maxPos:m.maxPos+L]
	kt := buf[2*m.maxPos : 2*m.maxPos+hd*L]
	// Eight keys at a time, so that both the rows read and the runs
	// written stay in the L1 cache.
	for j0 := 0; j0 < L; j0 += 8 {
		j1 := min(L, j0+8)
		for e := range hd {
			dst := kt[e*L+j0 : e*L+j1]
			for j := range dst {
				dst[j] = s.qkv[(s0+j0+j)*3*H+H+h*hd+e]
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
