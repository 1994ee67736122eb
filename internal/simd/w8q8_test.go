package simd

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// randW8 returns rows×cols weights, normal with a scale per row between
// 2⁻⁸ and 2, some blocks all zero and some with one large outlier;
// extreme makes every weight 1, which quantizes to 127 (with randActs'
// extreme −127: the largest integer sums).
func randW8(rng *rand.Rand, rows, cols int, extreme bool) []float32 {
	w := make([]float32, rows*cols)
	for r := range rows {
		s := math.Ldexp(1, -8+rng.IntN(10))
		for c := range cols {
			w[r*cols+c] = float32(s * rng.NormFloat64())
			if extreme {
				w[r*cols+c] = 1
			}
		}
	}
	for b := 0; b < len(w) && !extreme; b += BlockLen {
		switch rng.IntN(8) {
		case 0:
			clear(w[b : b+BlockLen])
		case 1:
			w[b+rng.IntN(BlockLen)] *= 30
		}
	}
	return w
}

// unpackW8 reads a W8's weights and scales back out of its packing, as
// w8BlockBytes describes it: q[r][c] and d[r][block].
func unpackW8(p *W8) (q [][]int8, d [][]float32) {
	nb := p.cols / BlockLen
	q, d = make([][]int8, p.rows), make([][]float32, p.rows)
	for r := range p.rows {
		q[r], d[r] = make([]int8, p.cols), make([]float32, nb)
		for b := range nb {
			blk := p.data[((r/RowGroup)*nb+b)*w8BlockBytes:]
			for k := range BlockLen {
				q[r][b*BlockLen+k] = int8(blk[64*(k/4)+4*(r%RowGroup)+k%4])
			}
			d[r][b] = math.Float32frombits(binary.LittleEndian.Uint32(blk[512+4*(r%RowGroup):]))
		}
	}
	return q, d
}

// dequantizedW8 is the product computed in float64 from the unpacked
// weights and the activations read back through a's packing, with the sums
// of the terms' magnitudes (the scale of float32's rounding in the
// kernels' sums).
func dequantizedW8(p *W8, a *Q8, bias []float32) (out, mag [][]float64) {
	q, d := unpackW8(p)
	nb := p.cols / BlockLen
	out, mag = make([][]float64, a.rows), make([][]float64, a.rows)
	for t := range out {
		out[t], mag[t] = make([]float64, p.rows), make([]float64, p.rows)
		tile, slot := t/tokenTile, t%tokenTile
		for r := range p.rows {
			s := float64(bias[r])
			m := math.Abs(s)
			for b := range nb {
				ab := a.data[(tile*nb+b)*aBlockBytes:]
				da := float64(math.Float32frombits(binary.LittleEndian.Uint32(ab[256+4*slot:])))
				var sum int64
				for k := range BlockLen {
					sum += int64(q[r][b*BlockLen+k]) * int64(int8(ab[slot*BlockLen+k]))
				}
				s += float64(d[r][b]) * da * float64(sum)
				m += math.Abs(float64(d[r][b]) * da * float64(sum))
			}
			out[t][r], mag[t][r] = s, m
		}
	}
	return out, mag
}

func TestW8KernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	t.Logf("W8×Q8 kernels on this CPU: %s", w8KernelNames())
	for _, k := range w8q8Kernels {
		for _, rows := range []int{16, 48} {
			for _, cols := range []int{32, 64, 384, 1536} {
				for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 33} {
					for _, extreme := range []bool{false, true} {
						name := fmt.Sprintf("%s/%dx%d/n%d/extreme=%v", k.name, rows, cols, n, extreme)
						checkW8Kernel(t, name, k, rng, rows, cols, n, extreme)
					}
				}
			}
		}
	}
}

func w8KernelNames() string {
	var names []string
	for _, k := range w8q8Kernels {
		names = append(names, k.name)
	}
	return strings.Join(names, ", ")
}

func checkW8Kernel(t *testing.T, name string, k q8Kernel, rng *rand.Rand, rows, cols, n int, extreme bool) {
	t.Helper()
	wf := randW8(rng, rows, cols, extreme)
	w, err := QuantizeW8(wf, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	bias := make([]float32, rows)
	for i := range bias {
		bias[i] = float32(rng.NormFloat64())
	}
	x := randActs(rng, n, cols, extreme)
	var a Q8
	a.Reset(n, cols)
	a.QuantizeRows(x, 0, n)
	ldy := rows + 3
	y := make([]float32, n*ldy)
	for i := range y {
		y[i] = -7
	}
	// Two calls on halves of the groups, as concurrent workers make them.
	groups := rows / RowGroup
	matMul(k, y, ldy, &w.packed, bias, &a, 0, groups/2)
	matMul(k, y, ldy, &w.packed, bias, &a, groups/2, groups)
	want, mag := dequantizedW8(w, &a, bias)
	for ti := range n {
		for r := range rows {
			got, exp := float64(y[ti*ldy+r]), want[ti][r]
			if d := math.Abs(got - exp); d > 1e-6*mag[ti][r] {
				t.Fatalf("%s: y[%d][%d] = %g, want %g", name, ti, r, got, exp)
			}
			if bound := quantBound(wf[r*cols:(r+1)*cols], x[ti*cols:(ti+1)*cols]); math.Abs(got-float64(bias[r])-
				dot64(wf[r*cols:(r+1)*cols], x[ti*cols:(ti+1)*cols])) > bound+1e-6*mag[ti][r] {
				t.Fatalf("%s: y[%d][%d] = %g is more than %g from the fp32 operands' product", name, ti, r, got, bound)
			}
		}
		for r := rows; r < ldy && ti*ldy+r < len(y); r++ {
			if y[ti*ldy+r] != -7 {
				t.Fatalf("%s: wrote y[%d][%d] past the %d rows", name, ti, r, rows)
			}
		}
	}
}

func dot64(w, x []float32) float64 {
	var s float64
	for i := range w {
		s += float64(w[i]) * float64(x[i])
	}
	return s
}

// quantBound bounds |⟨w, x⟩ − ⟨ŵ, x̂⟩| for the quantized ŵ and x̂ of one
// row: each block's values are within half a step (max/127/2) of the
// originals, so the error is at most Σ|w−ŵ|·|x| + |ŵ|·|x−x̂| ≤
// Σ (sw/2)·|x| + (|w|+sw/2)·(sx/2), with a margin for the scales' rounding.
func quantBound(w, x []float32) float64 {
	var bound float64
	for b := 0; b < len(w); b += BlockLen {
		var aw, ax float64
		for k := b; k < b+BlockLen; k++ {
			aw, ax = max(aw, math.Abs(float64(w[k]))), max(ax, math.Abs(float64(x[k])))
		}
		sw, sx := aw/127, ax/127
		for k := b; k < b+BlockLen; k++ {
			bound += sw/2*math.Abs(float64(x[k])) + (math.Abs(float64(w[k]))+sw/2)*sx/2
		}
	}
	return bound * (1 + 1e-5)
}

// TestW8Q8KernelsMatchGo compares every kernel with the Go kernel on the
// same packed operands, at the shapes of a BERT-small's products.
func TestW8Q8KernelsMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, shape := range [][2]int{{384, 384}, {1536, 384}, {384, 1536}} {
		rows, cols := shape[0], shape[1]
		w, err := QuantizeW8(randW8(rng, rows, cols, false), rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		bias := make([]float32, rows)
		n := 37
		var a Q8
		a.Reset(n, cols)
		a.QuantizeRows(randActs(rng, n, cols, false), 0, n)
		ref := make([]float32, n*rows)
		matMul(q8Go(&w8Format), ref, rows, &w.packed, bias, &a, 0, rows/RowGroup)
		_, mag := dequantizedW8(w, &a, bias)
		for _, k := range w8q8Kernels {
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

func TestQuantizeW8(t *testing.T) {
	const rows, cols = 32, 64
	w := make([]float32, rows*cols)
	// Row 0, block 0: max|w| 127, scale 1, so the values show the rounding.
	copy(w, []float32{127, 2.5, 3.5, -2.5, -3.5, 0.49, -0.51, 100.4, -127})
	w[cols+40] = -3 // row 1, block 1: one negative value; block 0 all zero
	rng := rand.New(rand.NewPCG(25, 26))
	copy(w[2*cols:], randW8(rng, rows-2, cols, false))
	p, err := QuantizeW8(w, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rows() != rows || p.Cols() != cols {
		t.Fatalf("W8 is %d×%d, want %d×%d", p.Rows(), p.Cols(), rows, cols)
	}
	q, d := unpackW8(p)
	for j, want := range []int8{127, 2, 4, -2, -4, 0, -1, 100, -127} {
		if q[0][j] != want {
			t.Errorf("q[0][%d] = %d, want %d (w = %g)", j, q[0][j], want, w[j])
		}
	}
	if d[0][0] != 1 {
		t.Errorf("row 0's scale = %g, want 1", d[0][0])
	}
	if d[1][0] != 0 || q[1][8] != 0 || q[1][40] != -127 {
		t.Errorf("row 1: zero block's scale %g, value %d; lone -3 quantized to %d, want 0, 0, -127", d[1][0], q[1][8], q[1][40])
	}
	// Every weight is within half a step of its block's scale of the value
	// it quantizes to, and each block's largest |w| is ±127 steps.
	for r := range rows {
		for b := range cols / BlockLen {
			var amax float64
			for k := b * BlockLen; k < (b+1)*BlockLen; k++ {
				amax = max(amax, math.Abs(float64(w[r*cols+k])))
				if e := math.Abs(float64(q[r][k])*float64(d[r][b]) - float64(w[r*cols+k])); e > float64(d[r][b])*(0.5+1e-6) {
					t.Fatalf("w[%d][%d] = %g quantized to %d × %g, %g off", r, k, w[r*cols+k], q[r][k], d[r][b], e)
				}
			}
			if want := float32(amax) / 127; d[r][b] != want {
				t.Fatalf("row %d block %d: scale %g, want max|w|/127 = %g", r, b, d[r][b], want)
			}
		}
	}
}

func TestQuantizeW8Errors(t *testing.T) {
	nan := float32(math.NaN())
	for _, tt := range []struct {
		rows, cols, n int
		bad           float32
		want          string
	}{
		{15, 32, 15 * 32, 0, "rows 15"},
		{0, 32, 0, 0, "rows 0"},
		{16, 48, 16 * 48, 0, "cols 48"},
		{16, 32, 16*32 - 1, 0, "needs 512 weights, got 511"},
		{16, 32, 16 * 32, nan, "weight [1][3] is NaN"},
		{16, 32, 16 * 32, float32(math.Inf(-1)), "weight [1][3] is -Inf"},
	} {
		w := make([]float32, tt.n)
		if tt.bad != 0 {
			w[35] = tt.bad
		}
		_, err := QuantizeW8(w, tt.rows, tt.cols)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("QuantizeW8(%d weights, %d, %d) = %v, want an error with %q", tt.n, tt.rows, tt.cols, err, tt.want)
		}
	}
}
