package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randF32(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
	}
	return x
}

func near(got float32, want, mag float64) bool {
	return math.Abs(float64(got)-want) <= 1e-5*mag+1e-30
}

// checkF32 runs the fp32 kernels on every length up to 40 and a few
// attention-sized ones, against float64 sums.
func checkF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range append([]int{1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 250, 512}, 3, 5) {
		for _, hd := range []int{8, 24, 32, 40} {
			name := fmt.Sprintf("n=%d hd=%d", n, hd)
			q := randF32(rng, hd, 1)
			ld := n + 3
			kt := randF32(rng, (hd-1)*ld+n, 1)
			out := make([]float32, n)
			Scores(out, q, kt, ld)
			for j := range n {
				var want, mag float64
				for e := range hd {
					want += float64(q[e]) * float64(kt[e*ld+j])
					mag += math.Abs(float64(q[e]) * float64(kt[e*ld+j]))
				}
				if !near(out[j], want, mag) {
					t.Fatalf("Scores %s: out[%d] = %g, want %g", name, j, out[j], want)
				}
			}
			// Two queries at once: the same sums in the same order.
			q1 := randF32(rng, hd, 1)
			out1, pair0, pair1 := make([]float32, n), make([]float32, n), make([]float32, n)
			Scores(out1, q1, kt, ld)
			Scores2(pair0, pair1, q, q1, kt, ld)
			if !slices.Equal(pair0, out) || !slices.Equal(pair1, out1) {
				t.Fatalf("Scores2 %s differs from Scores on each query", name)
			}
			p := randF32(rng, n, 1)
			ldv := hd + 5
			v := randF32(rng, (n-1)*ldv+hd, 1)
			ws := make([]float32, hd)
			WeightedSum(ws, p, v, ldv, 0.5)
			for e := range hd {
				var want, mag float64
				for s := range n {
					want += float64(p[s]) * float64(v[s*ldv+e])
					mag += math.Abs(float64(p[s]) * float64(v[s*ldv+e]))
				}
				want, mag = want*0.5, mag*0.5
				if !near(ws[e], want, mag) {
					t.Fatalf("WeightedSum %s: out[%d] = %g, want %g", name, e, ws[e], want)
				}
			}
			p1 := randF32(rng, n, 1)
			ws1, w0, w1 := make([]float32, hd), make([]float32, hd), make([]float32, hd)
			WeightedSum(ws1, p1, v, ldv, 0.25)
			WeightedSum2(w0, w1, p, p1, v, ldv, 0.5, 0.25)
			if !slices.Equal(w0, ws) || !slices.Equal(w1, ws1) {
				t.Fatalf("WeightedSum2 %s differs from WeightedSum on each query", name)
			}
		}
		x := randF32(rng, n, 30)
		x[rng.IntN(n)] = -200 // far below the max: exp underflows to 0
		orig := append([]float32(nil), x...)
		mx := float64(orig[0])
		for _, v := range orig {
			mx = max(mx, float64(v))
		}
		sum := Softmax(x, 0.25)
		var wantSum float64
		for i, v := range orig {
			arg := 0.25*float64(v) - 0.25*mx
			want := math.Exp(arg)
			if want < 1e-37 {
				want = 0
			}
			wantSum += want
			// The float32 argument's rounding, relative to |arg|, becomes
			// the result's relative error.
			if math.Abs(float64(x[i])-want) > (1e-6+2e-7*math.Abs(arg))*want+1e-37 {
				t.Fatalf("Softmax n=%d: x[%d] = %g, want %g", n, i, x[i], want)
			}
		}
		if !near(sum, wantSum, wantSum) {
			t.Fatalf("Softmax n=%d: sum %g, want %g", n, sum, wantSum)
		}
		g := randF32(rng, n, 3)
		g[0] = 9 // past erf's clamp
		orig = append(orig[:0], g...)
		GELU(g)
		for i, v := range orig {
			want := 0.5 * float64(v) * (1 + math.Erf(float64(v)/math.Sqrt2))
			if math.Abs(float64(g[i])-want) > 2e-6*math.Abs(float64(v))+1e-7 {
				t.Fatalf("GELU n=%d: gelu(%g) = %g, want %g", n, v, g[i], want)
			}
		}
	}
}

func TestF32Kernels(t *testing.T) { checkF32(t) }
