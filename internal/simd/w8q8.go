package simd

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The W8×Q8 product (see q8.go), where W is quantized to int8 per block of
// BlockLen weights of a row (symmetric: scale = max|w|/127, one float32
// scale per block). Each output is
//
//	bias + Σ_blocks scale_w·scale_x·⟨w, q⟩
//
// in the same lane layout as the Q4 product: a 32-bit lane holds four
// consecutive weights of one row. The kernels differ in how they multiply signed bytes by signed
// bytes: VPDPBUSD takes unsigned weights, so the VNNI kernel adds 128 to
// each (flipping its top bit) and takes 128·Σq away again (the Q8's offset
// −8·Σq times 16); with VPMADDUBSW that could overflow its int16 pairs, so
// the AVX2 kernel multiplies |w| by q given w's sign (VPSIGNB), as
// llama.cpp does, which is exact because Q8.QuantizeRows never makes −128.
const (
	// w8BlockBytes is a packed weight block of a row group: eight 64-byte
	// vectors of weights (vector j, lane r: weights 4j…4j+3 of row r's
	// block), then the sixteen rows' scales as float32.
	w8BlockBytes = 8*64 + RowGroup*4
)

// w8Format is W8's packing, its weights the int8 values.
var w8Format = wFormat{name: "W8", block: w8BlockBytes, scales: 8 * 64,
	unpack: func(wb []byte, r int, wq *[BlockLen]int32) {
		for j := range 8 {
			for i := range 4 {
				wq[4*j+i] = int32(int8(wb[64*j+4*r+i]))
			}
		}
	}}

// W8 is a weight matrix quantized to int8 in blocks of BlockLen along a
// row, one scale per block, packed for MatMulW8Q8.
type W8 struct{ packed }

// QuantizeW8 quantizes the row-major rows×cols matrix w (y = x·wᵀ) to int8
// and packs it: per block of BlockLen weights of a row, scale max|w|/127
// and weights w/scale rounded half to even. rows must be a multiple of
// RowGroup, cols of BlockLen, and every weight finite.
func QuantizeW8(w []float32, rows, cols int) (*W8, error) {
	if err := w8Format.checkShape(rows, cols); err != nil {
		return nil, err
	}
	if len(w) != rows*cols {
		return nil, fmt.Errorf("simd: W8 %d×%d needs %d weights, got %d", rows, cols, rows*cols, len(w))
	}
	for i, v := range w {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("simd: W8 weight [%d][%d] is %g", i/cols, i%cols, v)
		}
	}
	nb := cols / BlockLen
	p := &W8{w8Format.pack(rows, cols)}
	for r := range rows {
		g, lane := r/RowGroup, r%RowGroup
		for b := range nb {
			var q [BlockLen]int8
			d := quantizeW8Block(w[r*cols+b*BlockLen:r*cols+(b+1)*BlockLen], &q)
			dst := p.data[(g*nb+b)*w8BlockBytes:]
			for j := range 8 {
				for i := range 4 {
					dst[64*j+4*lane+i] = byte(q[4*j+i])
				}
			}
			binary.LittleEndian.PutUint32(dst[512+4*lane:], math.Float32bits(d))
		}
	}
	return p, nil
}

// quantizeW8Block quantizes one block into q and returns its scale:
// max|w|/127, values w·(1/scale) rounded half to even and clamped to ±127
// (0 and all zeros for an all-zero block).
func quantizeW8Block(w []float32, q *[BlockLen]int8) float32 {
	var amax float32
	for _, v := range w {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if d > 0 {
		id = 1 / d
	}
	for j, v := range w {
		q[j] = int8(min(max(roundEven(v*id), -127), 127))
	}
	return d
}

// MatMulW8Q8 writes y[t·ldy + r] = bias[r] + (x·Wᵀ)[t][r] for every row t
// of a and every output row r in the row groups [g0, g1) of w (rows
// g0·RowGroup up to g1·RowGroup), with the kernel this CPU runs. Calls on
// disjoint group ranges may run concurrently.
func MatMulW8Q8(y []float32, ldy int, w *W8, bias []float32, a *Q8, g0, g1 int) {
	matMul(w8q8Kernels[0], y, ldy, &w.packed, bias, a, g0, g1)
}

// W8Q8Kernel names the W8×Q8 kernel this CPU runs: "avx512vnni", "avx2",
// "neon-dot" or "go".
func W8Q8Kernel() string { return w8q8Kernels[0].name }
