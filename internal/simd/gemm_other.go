//go:build !amd64 && !arm64

package simd

// Kernels lists the fp32 kernels this CPU runs, fastest first.
var Kernels = []Kernel{goKernel}
