package simd

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// randQ4 returns rows×cols weights as Q4_0 blocks with random nibbles and
// scales of either sign between 2⁻¹⁰ and 2⁻¹; extreme sets every nibble to
// 15 and every scale to 1, the largest integer sums.
func randQ4(rng *rand.Rand, rows, cols int, extreme bool) []byte {
	blocks := make([]byte, rows*cols/BlockLen*Q4Block18)
	for i := 0; i < len(blocks); i += Q4Block18 {
		h := uint16(rng.IntN(2))<<15 | uint16(5+rng.IntN(10))<<10 | uint16(rng.IntN(1024))
		if extreme {
			h = 0x3c00
		}
		binary.LittleEndian.PutUint16(blocks[i:], h)
		for j := 2; j < Q4Block18; j++ {
			blocks[i+j] = byte(rng.IntN(256))
			if extreme {
				blocks[i+j] = 0xff
			}
		}
	}
	return blocks
}

// randActs returns rows×cols activations, mostly normal with some blocks
// all zero and some with one large outlier, as transformer activations
// have; extreme makes every value the block's negative maximum.
func randActs(rng *rand.Rand, rows, cols int, extreme bool) []float32 {
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
		if extreme {
			x[i] = -1
		}
	}
	for b := 0; b < len(x) && !extreme; b += BlockLen {
		switch rng.IntN(8) {
		case 0:
			clear(x[b : b+BlockLen])
		case 1:
			x[b+rng.IntN(BlockLen)] = 40
		}
	}
	return x
}

// dequantized is the product computed from the unpacked operands in
// float64: the Q4_0 weights as (nibble−8)·scale and the activations as
// q·scale read back through a's packing, which checks the packing too. It
// also returns the sums of the terms' magnitudes, the scale of float32's
// rounding in the q4q8Kernels' sums.
func dequantized(blocks []byte, rows, cols int, a *Q8, bias []float32) (out, mag [][]float64) {
	nb := cols / BlockLen
	out = make([][]float64, a.rows)
	mag = make([][]float64, a.rows)
	for t := range out {
		out[t] = make([]float64, rows)
		mag[t] = make([]float64, rows)
		tile, slot := t/tokenTile, t%tokenTile
		for r := range rows {
			s := float64(bias[r])
			m := math.Abs(s)
			for b := range nb {
				blk := blocks[(r*nb+b)*Q4Block18:]
				dw := float64(HalfToFloat(binary.LittleEndian.Uint16(blk)))
				ab := a.data[(tile*nb+b)*aBlockBytes:]
				da := float64(math.Float32frombits(binary.LittleEndian.Uint32(ab[256+4*slot:])))
				var sum int64
				for j := range 16 {
					lo, hi := int64(blk[2+j]&15)-8, int64(blk[2+j]>>4)-8
					sum += lo*int64(int8(ab[slot*BlockLen+j])) + hi*int64(int8(ab[slot*BlockLen+16+j]))
				}
				s += dw * da * float64(sum)
				m += math.Abs(dw * da * float64(sum))
			}
			out[t][r], mag[t][r] = s, m
		}
	}
	return out, mag
}

func TestKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t.Logf("Q4×Q8 kernels on this CPU: %s", kernelNames())
	for _, k := range q4q8Kernels {
		for _, rows := range []int{16, 48} {
			for _, cols := range []int{32, 64, 384, 1536} {
				for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 33} {
					for _, extreme := range []bool{false, true} {
						name := fmt.Sprintf("%s/%dx%d/n%d/extreme=%v", k.name, rows, cols, n, extreme)
						checkKernel(t, name, k, rng, rows, cols, n, extreme)
					}
				}
			}
		}
	}
}

func kernelNames() string {
	var names []string
	for _, k := range q4q8Kernels {
		names = append(names, k.name)
	}
	return strings.Join(names, ", ")
}

func checkKernel(t *testing.T, name string, k q8Kernel, rng *rand.Rand, rows, cols, n int, extreme bool) {
	t.Helper()
	blocks := randQ4(rng, rows, cols, extreme)
	w, err := PackQ4(blocks, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	bias := make([]float32, rows)
	for i := range bias {
		bias[i] = float32(rng.NormFloat64())
	}
	var a Q8
	a.Reset(n, cols)
	a.QuantizeRows(randActs(rng, n, cols, extreme), 0, n)
	ldy := rows + 3
	y := make([]float32, n*ldy)
	for i := range y {
		y[i] = -7
	}
	// Two calls on halves of the groups, as concurrent workers make them.
	groups := rows / RowGroup
	matMul(k, y, ldy, &w.packed, bias, &a, 0, groups/2)
	matMul(k, y, ldy, &w.packed, bias, &a, groups/2, groups)
	want, mag := dequantized(blocks, rows, cols, &a, bias)
	for ti := range n {
		for r := range rows {
			got, exp := float64(y[ti*ldy+r]), want[ti][r]
			if d := math.Abs(got - exp); d > 1e-6*mag[ti][r] {
				t.Fatalf("%s: y[%d][%d] = %g, want %g", name, ti, r, got, exp)
			}
		}
		for r := rows; r < ldy && ti*ldy+r < len(y); r++ {
			if y[ti*ldy+r] != -7 {
				t.Fatalf("%s: wrote y[%d][%d] past the %d rows", name, ti, r, rows)
			}
		}
	}
}

// TestQ4Q8KernelsMatchGo compares every kernel with the Go kernel on the same
// packed operands, at the shapes of the encoder's six products.
func TestQ4Q8KernelsMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, shape := range [][2]int{{384, 384}, {1536, 384}, {384, 1536}} {
		rows, cols := shape[0], shape[1]
		blocks := randQ4(rng, rows, cols, false)
		w, err := PackQ4(blocks, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		bias := make([]float32, rows)
		n := 37
		var a Q8
		a.Reset(n, cols)
		a.QuantizeRows(randActs(rng, n, cols, false), 0, n)
		ref := make([]float32, n*rows)
		matMul(q8Go(&q4Format), ref, rows, &w.packed, bias, &a, 0, rows/RowGroup)
		_, mag := dequantized(blocks, rows, cols, &a, bias)
		for _, k := range q4q8Kernels {
			y := make([]float32, n*rows)
			matMul(k, y, rows, &w.packed, bias, &a, 0, rows/RowGroup)
			for i := range y {
				if d := math.Abs(float64(y[i] - ref[i])); d > 2e-6*mag[i/rows][i%rows] {
					t.Fatalf("%s %dx%d: y[%d] = %g, go kernel %g", k.name, rows, cols, i, y[i], ref[i])
				}
			}
		}
	}
}

func TestQuantizeRows(t *testing.T) {
	x := make([]float32, 2*64)
	// max|x| 127: scale 1, so the values show the rounding (half to even).
	copy(x, []float32{127, 2.5, 3.5, -2.5, -3.5, 0.49, -0.51, 100.4, -127})
	want := []int8{127, 2, 4, -2, -4, 0, -1, 100, -127}
	x[40] = -3 // a block of one negative value
	var a Q8
	a.Reset(2, 64)
	a.QuantizeRows(x, 0, 2)
	blk := a.data[:aBlockBytes]
	if d := math.Float32frombits(binary.LittleEndian.Uint32(blk[256:])); d != 1 {
		t.Errorf("scale = %g, want 1", d)
	}
	var sum int32
	for j, w := range want {
		if got := int8(blk[j]); got != w {
			t.Errorf("q[%d] = %d, want %d (x = %g)", j, got, w, x[j])
		}
		sum += int32(w)
	}
	if off := int32(binary.LittleEndian.Uint32(blk[288:])); off != -8*sum {
		t.Errorf("offset = %d, want %d", off, -8*sum)
	}
	second := a.data[aBlockBytes:]
	if q := int8(second[8]); q != -127 {
		t.Errorf("lone -3 quantized to %d, want -127", q)
	}
	if zero := second[32 : 32+32]; strings.Count(string(zero), "\x00") != 32 {
		t.Errorf("row 1's zero block quantized to %v", zero)
	}
	// Row 2 is padding and must be zero after a Reset over old data.
	a.Reset(2, 64)
	a.QuantizeRows(x, 0, 2)
	a.data[2*32] = 9
	a.Reset(2, 64)
	if a.data[2*32] != 0 {
		t.Error("Reset left a padding row's old value")
	}
}

func TestPackQ4Errors(t *testing.T) {
	for _, tt := range []struct {
		rows, cols, n int
		want          string
	}{
		{15, 32, 15 * 18, "rows 15"},
		{16, 48, 16 * 18, "cols 48"},
		{16, 32, 16*18 - 1, "needs 288 bytes, got 287"},
	} {
		_, err := PackQ4(make([]byte, tt.n), tt.rows, tt.cols)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("PackQ4(%d bytes, %d, %d) = %v, want an error with %q", tt.n, tt.rows, tt.cols, err, tt.want)
		}
	}
}

func TestHalfToFloat(t *testing.T) {
	for _, tt := range []struct {
		h    uint16
		want float32
	}{
		{0x3c00, 1}, {0xc000, -2}, {0x3555, 0.333251953125}, {0x0001, 5.960464477539063e-08},
		{0x03ff, 6.097555160522461e-05}, {0x7bff, 65504}, {0x8000, float32(math.Copysign(0, -1))},
	} {
		if got := HalfToFloat(tt.h); got != tt.want || math.Signbit(float64(got)) != math.Signbit(float64(tt.want)) {
			t.Errorf("HalfToFloat(%#04x) = %g, want %g", tt.h, got, tt.want)
		}
	}
	if !math.IsInf(float64(HalfToFloat(0xfc00)), -1) || !math.IsNaN(float64(HalfToFloat(0x7e00))) {
		t.Error("HalfToFloat does not keep infinities and NaNs")
	}
	// Every finite half is man·2^(exp−25) (normal: with the implicit bit).
	for h := range 1 << 16 {
		exp, man := h>>10&0x1f, h&0x3ff
		if exp == 31 {
			continue
		}
		want := math.Ldexp(float64(man), -24)
		if exp > 0 {
			want = math.Ldexp(float64(man|0x400), exp-25)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		if got := HalfToFloat(uint16(h)); float64(got) != want {
			t.Fatalf("HalfToFloat(%#04x) = %g, want %g", h, got, want)
		}
	}
}

// TestQuantizeAsmMatchesGo checks the assembly quantizer writes the Go
// one's bytes exactly, on activations with zero blocks, outliers and
// values on rounding halves.
func TestQuantizeAsmMatchesGo(t *testing.T) {
	if quantizeAsm == nil {
		t.Skip("no assembly quantizer on this CPU")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, cols := range []int{32, 384, 1536} {
		n := 11
		x := randActs(rng, n, cols, false)
		for i := 0; i < len(x); i += 7 {
			x[i] = float32(rng.IntN(255)-127) + 0.5 // halves where the scale is 1
		}
		var asm, ref Q8
		asm.Reset(n, cols)
		ref.Reset(n, cols)
		asm.QuantizeRows(x, 0, n)
		for r := range n {
			ref.quantizeRowGo(x[r*cols:(r+1)*cols], r)
		}
		if string(asm.data) != string(ref.data) {
			for i := range asm.data {
				if asm.data[i] != ref.data[i] {
					t.Fatalf("cols %d: byte %d is %#x, Go writes %#x", cols, i, asm.data[i], ref.data[i])
				}
			}
		}
	}
}
