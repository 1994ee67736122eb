package simd

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randomInt8(r *rand.Rand, n int) []int8 {
	out := make([]int8, n)
	for i := range out {
		out[i] = int8(r.IntN(255) - 127)
	}
	return out
}

// TestDotsMatchGo checks the CPU's kernel against dotsGo on random rows,
// among them rows of ±127 only (the largest sums, where an int16 step
// would saturate), for dimensions the kernel takes and ones it leaves to Go.
func TestDotsMatchGo(t *testing.T) {
	if dots == nil {
		t.Skip("no assembly kernel on this CPU")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{dotsWidth, 2 * dotsWidth, 512, 512 + dotsWidth, 33, 100} {
		for _, n := range []int{1, 2, 7, 100} {
			q := randomInt8(r, dim)
			rows := randomInt8(r, n*dim)
			if n == 7 {
				for i := range q {
					q[i] = 127
				}
				for i := range rows {
					rows[i] = int8(127 - 254*(i%2)*(i/dim%2))
				}
			}
			got, want := make([]int32, n), make([]int32, n)
			Dots(q, rows, got)
			dotsGo(q, rows, want)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("dim %d, %d rows: row %d = %d, want %d", dim, n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestDotsGo checks the reference itself on values worked by hand.
func TestDotsGo(t *testing.T) {
	q := []int8{1, -2, 3}
	rows := []int8{4, 5, 6, -127, 127, -127}
	out := make([]int32, 2)
	dotsGo(q, rows, out)
	if out[0] != 4-10+18 || out[1] != -127-254-381 {
		t.Fatalf("dotsGo = %v", out)
	}
}

func TestQuantize(t *testing.T) {
	v := []float32{0.5, -1, 0.25, 0, 1e-9}
	q := make([]int8, len(v))
	scale := Quantize(q, v)
	if scale != 1.0/127 {
		t.Fatalf("scale = %g, want 1/127", scale)
	}
	want := []int8{64, -127, 32, 0, 0}
	for i := range want {
		if q[i] != want[i] {
			t.Fatalf("Quantize = %v, want %v", q, want)
		}
	}
	for i, x := range v {
		if d := math.Abs(float64(scale*float32(q[i]) - x)); d > float64(scale)/2+1e-9 {
			t.Errorf("value %d: %g back as %g", i, x, scale*float32(q[i]))
		}
	}
	for _, bad := range [][]float32{make([]float32, len(v)), {1, float32(math.NaN()), 0, 0, 0}, {1, float32(math.Inf(-1)), 0, 0, 0}} {
		if s := Quantize(q, bad); s != 0 || slices.ContainsFunc(q, func(x int8) bool { return x != 0 }) {
			t.Errorf("Quantize(%v) = %v, scale %g; want zeros, scale 0", bad, q, s)
		}
	}
}

// TestQuantizedCosine checks that the quantised dot product ranks like the
// float one: for random unit vectors, the cosine computed from int8 values
// and scales is within 0.01 of the exact one.
func TestQuantizedCosine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const dim = 512
	unit := func() []float32 {
		v := make([]float32, dim)
		var n float64
		for i := range v {
			v[i] = float32(r.NormFloat64())
			n += float64(v[i]) * float64(v[i])
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
		return v
	}
	a, b := unit(), unit()
	for i := range b { // correlated, so the cosine is far from 0
		b[i] = 0.6*a[i] + 0.4*b[i]
	}
	qa, qb := make([]int8, dim), make([]int8, dim)
	sa, sb := Quantize(qa, a), Quantize(qb, b)
	out := make([]int32, 1)
	Dots(qa, qb, out)
	var exact, nb float64
	for i := range a {
		exact += float64(a[i]) * float64(b[i])
		nb += float64(b[i]) * float64(b[i])
	}
	exact /= math.Sqrt(nb)
	approx := float64(out[0]) * float64(sa) * float64(sb) / math.Sqrt(nb)
	if math.Abs(approx-exact) > 0.01 {
		t.Fatalf("quantised cosine %.4f, exact %.4f", approx, exact)
	}
}

// BenchmarkDots times this architecture's kernel and the Go loop it
// stands in for, on the same rows.
func BenchmarkDots(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const dim, n = 512, 4096
	q, rows := randomInt8(r, dim), randomInt8(r, n*dim)
	out := make([]int32, n)
	for _, k := range []struct {
		name string
		dots func(q, rows []int8, out []int32)
	}{{"kernel", Dots}, {"go", dotsGo}} {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(int64(len(rows)))
			for b.Loop() {
				k.dots(q, rows, out)
			}
		})
	}
}

func BenchmarkQuantize(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	v := make([]float32, 512)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	q := make([]int8, 512)
	for b.Loop() {
		Quantize(q, v)
	}
}

func BenchmarkDots100k(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const dim, n = 512, 100_000
	q, rows := randomInt8(r, dim), randomInt8(r, n*dim)
	out := make([]int32, 1024)
	b.SetBytes(int64(len(rows)))
	for b.Loop() {
		for i := 0; i < n; i += 1024 {
			m := min(1024, n-i)
			Dots(q, rows[i*dim:(i+m)*dim], out[:m])
		}
	}
}
