package simd

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The Q4_0×Q8_0 product (see q8.go), where W is stored 4-bit (Q4_0: per
// 32 weights one fp16 scale and 32 nibbles, weight = (nibble−8)·scale).
// Each output is
//
//	bias + Σ_blocks scale_w·scale_x·(⟨nibbles, q⟩ − 8·Σq)
//
// the −8·Σq being the Q8's offset.
const (
	// Q4Block18 is the size of a Q4_0 block in the file format: an fp16
	// scale and 16 bytes of nibbles (byte j holds weight j in its low
	// nibble and weight j+16 in its high one).
	Q4Block18 = 18

	// q4BlockBytes is a packed weight block of a row group: four 64-byte
	// vectors of nibbles (vector j, lane r: bytes 4j…4j+3 of row r's
	// block, so low nibbles are weights 4j…4j+3 and high ones 16+4j…),
	// then the sixteen rows' scales as float32.
	q4BlockBytes = 4*64 + RowGroup*4
)

// q4Format is Q4's packing, its weights the nibbles (the Q8's offset
// takes the 8 away).
var q4Format = wFormat{name: "Q4", block: q4BlockBytes, scales: 4 * 64, offset: true,
	unpack: func(wb []byte, r int, wq *[BlockLen]int32) {
		for j := range 4 {
			for i := range 4 {
				nib := wb[64*j+4*r+i]
				wq[4*j+i], wq[16+4*j+i] = int32(nib&15), int32(nib>>4)
			}
		}
	}}

// Q4 is a weight matrix of Rows×Cols repacked for the Q4×Q8 kernels.
type Q4 struct{ packed }

// PackQ4 repacks a rows×cols matrix given as row-major Q4_0 blocks of
// Q4Block18 bytes. rows must be a multiple of RowGroup and cols of BlockLen.
func PackQ4(blocks []byte, rows, cols int) (*Q4, error) {
	if err := q4Format.checkShape(rows, cols); err != nil {
		return nil, err
	}
	nb := cols / BlockLen
	if want := rows * nb * Q4Block18; len(blocks) != want {
		return nil, fmt.Errorf("simd: Q4 %d×%d needs %d bytes, got %d", rows, cols, want, len(blocks))
	}
	w := &Q4{q4Format.pack(rows, cols)}
	for g := 0; g < rows/RowGroup; g++ {
		for b := 0; b < nb; b++ {
			dst := w.data[(g*nb+b)*q4BlockBytes:]
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

// MatMulQ4Q8 writes y[t·ldy + r] = bias[r] + (x·Wᵀ)[t][r] for every row t
// of a and every output row r in the row groups [g0, g1) of w (rows
// g0·RowGroup up to g1·RowGroup), with the kernel this CPU runs. Calls on
// disjoint group ranges may run concurrently.
func MatMulQ4Q8(y []float32, ldy int, w *Q4, bias []float32, a *Q8, g0, g1 int) {
	matMul(q4q8Kernels[0], y, ldy, &w.packed, bias, a, g0, g1)
}

// Q4Q8Kernel names the Q4×Q8 kernel this CPU runs: "avx512vnni", "avx2",
// "neon-dot" or "go".
func Q4Q8Kernel() string { return q4q8Kernels[0].name }

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
