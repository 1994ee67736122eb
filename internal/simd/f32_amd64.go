package simd

import "golang.org/x/sys/cpu"

// Implemented in f32_amd64.s for n a multiple of 8.
func dotAVX2(x, y *float32, n int) float32
func axpyAVX2(a float32, x, y *float32, n int)

var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func dotF32(x, y []float32) float32 {
	n := len(x) &^ 7
	if !hasAVX2FMA || n == 0 {
		return dotGo(x, y)
	}
	return dotAVX2(&x[0], &y[0], n) + dotGo(x[n:], y[n:])
}

func axpyF32(a float32, x, y []float32) {
	n := len(x) &^ 7
	if !hasAVX2FMA || n == 0 {
		axpyGo(a, x, y)
		return
	}
	axpyAVX2(a, &x[0], &y[0], n)
	axpyGo(a, x[n:], y[n:])
}
