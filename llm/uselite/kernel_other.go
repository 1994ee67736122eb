//go:build !amd64 && !arm64

package uselite

// kernels lists the kernels this CPU runs, fastest first.
var kernels = []kernel{goKernel}
