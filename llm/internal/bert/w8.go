package bert

import "github.com/vaultask/vaultask/internal/simd"

// W8 is an int8 matrix as a Linear.
func W8(w *simd.W8) Linear { return w8{w} }

type w8 struct{ *simd.W8 }

func (w w8) MatMul(y []float32, ldy int, bias []float32, a *simd.Q8, g0, g1 int) {
	simd.MatMulW8Q8(y, ldy, w.W8, bias, a, g0, g1)
}
