package simd

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKernels checks every kernel this CPU runs, through Gemm and both
// packings, against a float64 product, on sizes that hit every edge: rows
// short of mr, columns short of a panel, k of 1.
func TestKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 { return randomFloats(rng, n) }
	for _, kern := range Kernels {
		t.Run(kern.Name, func(t *testing.T) {
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
				buf := make([]float32, PackedLen(k, n, kern.NR))
				ts := NewTiles(k, kern.NR)
				for name, p := range map[string]func() Packed{
					"packRows": func() Packed { return kern.PackRows(buf, b, ldb, k, n) },
					"packCols": func() Packed { return kern.PackCols(buf, bt, k+1, k, n) },
				} {
					for _, relu := range []bool{false, true} {
						got := append([]float32(nil), c...)
						kern.Gemm(m, a, lda, p(), got, ldc, relu, ts)
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

// TestKernelsMatchGo checks every kernel this CPU runs against the pure Go
// one on random shapes, each with the sizes around mr and the kernel's nr
// mixed in, through Gemm: the edges go through the tiles and the Go code
// there, the rest straight to the kernel.
func TestKernelsMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fill := func(n int) []float32 { return randomFloats(rng, n) }
	for _, kern := range Kernels {
		if kern.Name == goKernel.Name {
			continue
		}
		t.Run(kern.Name, func(t *testing.T) {
			pick := func(lo, hi int, edges ...int) int {
				if rng.IntN(2) == 0 {
					return max(lo, edges[rng.IntN(len(edges))])
				}
				return lo + rng.IntN(hi-lo+1)
			}
			for range 200 {
				m := pick(1, 3*mr+1, mr-1, mr, mr+1, 2*mr)
				k := pick(1, 200, 1, 2, 3, 128)
				n := pick(1, 3*kern.NR+1, kern.NR-1, kern.NR, kern.NR+1, 2*kern.NR)
				lda, ldb, ldc := k+rng.IntN(3), n+rng.IntN(3), n+1+rng.IntN(3)
				a, b, c := fill(m*lda), fill(k*ldb), fill(m*ldc)
				relu := rng.IntN(2) == 0

				want := slices.Clone(c)
				goKernel.Gemm(m, a, lda, goKernel.PackRows(make([]float32, PackedLen(k, n, goKernel.NR)), b, ldb, k, n), want, ldc, relu, NewTiles(k, goKernel.NR))
				got := slices.Clone(c)
				kern.Gemm(m, a, lda, kern.PackRows(make([]float32, PackedLen(k, n, kern.NR)), b, ldb, k, n), got, ldc, relu, NewTiles(k, kern.NR))
				for i := range m {
					for j := range ldc {
						g, w := got[i*ldc+j], want[i*ldc+j]
						if j >= n {
							if g != c[i*ldc+j] {
								t.Fatalf("%dx%dx%d: wrote C[%d][%d] past the last column", m, k, n, i, j)
							}
							continue
						}
						if d := math.Abs(float64(g) - float64(w)); d > 1e-4 || relu && g < 0 {
							t.Fatalf("relu=%v %dx%dx%d: C[%d][%d] = %v, the Go kernel's %v", relu, m, k, n, i, j, g, w)
						}
					}
				}
			}
		})
	}
}

// BenchmarkGemm multiplies one window's rows by the widest weight matrix
// of the built-in embedder (llm/uselite: 128×512 · 512×1536, a
// feed-forward layer), with its ReLU, on each kernel this CPU runs, on one
// core: the kernels alone, without the rest of the forward pass. It is the
// figure to compare on an arm64 CPU (NEON against go); under qemu it says
// nothing about speed.
func BenchmarkGemm(b *testing.B) {
	const m, k, n = 128, 512, 1536
	a, w := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range w {
		w[i] = float32(i%5)/4 - 0.5
	}
	for _, kern := range Kernels {
		b.Run("kernel="+kern.Name, func(b *testing.B) {
			p := kern.PackRows(make([]float32, PackedLen(k, n, kern.NR)), w, n, k, n)
			c, t := make([]float32, m*n), NewTiles(k, kern.NR)
			for b.Loop() {
				kern.Gemm(m, a, k, p, c, n, true, t)
			}
			b.ReportMetric(2*m*k*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// randomFloats is n floats drawn evenly from [-1, 1).
func randomFloats(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*2 - 1
	}
	return s
}
