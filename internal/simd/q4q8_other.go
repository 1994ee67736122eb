//go:build !amd64 && !arm64

package simd

// kernels lists the Q4×Q8 kernels this CPU runs, fastest first.
var kernels = []kernel{goKernel}

// quantizeAsm is nil: rows are quantized in Go.
var quantizeAsm func(x []float32, q, d []byte)
