//go:build !amd64 && !arm64

package simd

// q4q8Kernels and w8q8Kernels list the kernels this CPU runs: the Go ones.
var (
	q4q8Kernels = []q8Kernel{q8Go(&q4Format)}
	w8q8Kernels = []q8Kernel{q8Go(&w8Format)}
)

// quantizeAsm is nil: rows are quantized in Go.
var quantizeAsm func(x []float32, q, d []byte)
