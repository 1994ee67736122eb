package uselite

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernels checks every kernel this CPU runs, through gemm and both
// packings, against a float64 product, on sizes that hit every edge: rows
// short of mr, columns short of a panel, k of 1.
func TestKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = rng.Float32()*2 - 1
		}
		return s
	}
	for _, kern := range kernels {
		t.Run(kern.name, func(t *testing.T) {
			for _, size := range [][3]int{{1, 1, 1}, {6, 7, 32}, {5, 64, 31}, {13, 33, 70}, {12, 128, 16}, {50, 300, 100}} {
				m, k, n := size[0], size[1], size[2]
				lda, ldb, ldc := k+3, n+5, n+2
				a, b, c := fill(m*lda), fill(k*ldb), fill(m*ldc)
				bt := make([]float32, n*(k+1)) // bᵀ with row stride k+1
				for r := range k {
					for j := range n {
						bt[j*(k+1)+r] = b[r*ldb+j]
					}
				}
				want := make([]float64, m*n)
				for i := range m {
					for j := range n {
						s := float64(c[i*ldc+j])
						for r := range k {
							s += float64(a[i*lda+r]) * float64(b[r*ldb+j])
						}
						want[i*n+j] = s
					}
				}
				buf := make([]float32, packedLen(k, n, kern.nr))
				ts := newTiles(k, kern.nr)
				for name, p := range map[string]func() packed{
					"packRows": func() packed { return kern.packRows(buf, b, ldb, k, n) },
					"packCols": func() packed { return kern.packCols(buf, bt, k+1, k, n) },
				} {
					for _, relu := range []bool{false, true} {
						got := append([]float32(nil), c...)
						kern.gemm(m, a, lda, p(), got, ldc, relu, ts)
						for i := range m {
							for j := range n {
								w := want[i*n+j]
								if relu {
									w = max(w, 0)
								}
								if d := math.Abs(float64(got[i*ldc+j]) - w); d > 1e-4 {
									t.Fatalf("%s relu=%v %dx%dx%d: C[%d][%d] = %v, want %v", name, relu, m, k, n, i, j, got[i*ldc+j], w)
								}
							}
							for j := n; j < ldc; j++ {
								if got[i*ldc+j] != c[i*ldc+j] {
									t.Fatalf("%s %dx%dx%d: wrote C[%d][%d] past the last column", name, m, k, n, i, j)
								}
							}
						}
					}
				}
			}
		})
	}
}
