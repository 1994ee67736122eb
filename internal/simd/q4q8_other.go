//go:build !amd64 && !arm64

package simd

// kernels lists the Q4×Q8 kernels this CPU runs, fastest first.
var kernels = []kernel{goKernel}
