//go:build !amd64 && !arm64

package simd

// w8q8Kernels lists the W8×Q8 kernels this CPU runs, fastest first.
var w8q8Kernels = []w8q8Kernel{goW8Q8}
