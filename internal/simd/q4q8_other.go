//go:build !amd64 && !arm64

package simd

// q4q8Kernels lists the Q4×Q8 q4q8Kernels this CPU runs, fastest first.
var q4q8Kernels = []q4q8Kernel{goQ4Q8}

// quantizeAsm is nil: rows are quantized in Go.
var quantizeAsm func(x []float32, q, d []byte)
