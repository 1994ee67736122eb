//go:build !amd64

package simd

func dotF32(x, y []float32) float32 { return dotGo(x, y) }

func axpyF32(a float32, x, y []float32) { axpyGo(a, x, y) }
