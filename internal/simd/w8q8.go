package simd

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The W8×Q8 product y = x·Wᵀ + bias, where W is quantized to int8 per
// block of BlockLen weights of a row (symmetric: scale = max|w|/127, one
// float32 scale per block) and x is a Q8 as for MatMulQ4Q8. Each output is
//
//	bias + Σ_blocks scale_w·scale_x·⟨w, q⟩
//
// with the inner product in integers, in the same lane layout as the Q4
// product (see q4q8.go): a 32-bit lane holds four consecutive weights of
// one row. The kernels differ in how they multiply signed bytes by signed
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

// W8 is a weight matrix quantized to int8 in blocks of BlockLen along a
// row, one scale per block, packed for MatMulW8Q8.
type W8 struct {
	rows, cols int
	data       []byte
}

// Rows returns the number of output rows.
func (w *W8) Rows() int { return w.rows }

// Cols returns the number of inputs per row.
func (w *W8) Cols() int { return w.cols }

// QuantizeW8 quantizes the row-major rows×cols matrix w (y = x·wᵀ) to int8
// and packs it: per block of BlockLen weights of a row, scale max|w|/127
// and weights w/scale rounded half to even. rows must be a multiple of
// RowGroup, cols of BlockLen, and every weight finite.
func QuantizeW8(w []float32, rows, cols int) (*W8, error) {
	if rows <= 0 || rows%RowGroup != 0 {
		return nil, fmt.Errorf("simd: W8 rows %d is not a positive multiple of %d", rows, RowGroup)
	}
	if cols <= 0 || cols%BlockLen != 0 {
		return nil, fmt.Errorf("simd: W8 cols %d is not a positive multiple of %d", cols, BlockLen)
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
	p := &W8{rows: rows, cols: cols, data: make([]byte, rows/RowGroup*nb*w8BlockBytes)}
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
	matMulW8(w8q8Kernels[0], y, ldy, w, bias, a, g0, g1)
}

// W8Q8Kernel names the W8×Q8 kernel this CPU runs: "avx512vnni", "avx2",
// "neon-dot" or "go".
func W8Q8Kernel() string { return w8q8Kernels[0].name }

// w8q8Kernel computes one row group (16 rows of packed weights w) against
// tiles tiles of packed activations a, nb blocks each, writing tile t's row
// i to y[(8t+i)·ldy + r] = bias[r] + the product for r < 16.
type w8q8Kernel struct {
	name string
	fn   func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32)
}

func matMulW8(k w8q8Kernel, y []float32, ldy int, w *W8, bias []float32, a *Q8, g0, g1 int) {
	matMulPacked(k.fn, "MatMulW8Q8", packed{w.rows, w.cols, w8BlockBytes, w.data}, y, ldy, bias, a, g0, g1)
}

// goW8Q8 is the portable kernel and the reference the others are tested
// against.
var goW8Q8 = w8q8Kernel{name: "go", fn: w8q8Go}

func w8q8Go(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32) {
	le := binary.LittleEndian
	var wq [RowGroup][BlockLen]int32 // the block's weights, in order
	var dw [RowGroup]float32
	for tile := range tiles {
		var acc [tokenTile][RowGroup]float32
		for b := range nb {
			wb := w[b*w8BlockBytes : (b+1)*w8BlockBytes]
			for r := range RowGroup {
				for j := range 8 {
					for i := range 4 {
						wq[r][4*j+i] = int32(int8(wb[64*j+4*r+i]))
					}
				}
				dw[r] = math.Float32frombits(le.Uint32(wb[512+4*r:]))
			}
			ab := a[(tile*nb+b)*aBlockBytes : (tile*nb+b+1)*aBlockBytes]
			for t := range tokenTile {
				var q [BlockLen]int32
				for k, v := range ab[t*BlockLen : (t+1)*BlockLen] {
					q[k] = int32(int8(v))
				}
				da := math.Float32frombits(le.Uint32(ab[256+4*t:]))
				for r := range RowGroup {
					var sum int32
					for k := range BlockLen {
						sum += wq[r][k] * q[k]
					}
					acc[t][r] += float32(sum) * (dw[r] * da)
				}
			}
		}
		for t := range tokenTile {
			row := y[(tile*tokenTile+t)*ldy:]
			for r := range RowGroup {
				row[r] = bias[r] + acc[t][r]
			}
		}
	}
}
