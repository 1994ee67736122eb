package uselite

// Implemented in kernel_arm64.s.
func kernelNEON(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)

// kernels lists the kernels this CPU runs, fastest first. NEON (ASIMD) needs
// no feature check: Go's arm64 port requires it, and its runtime's own
// memmove and bytealg use it unconditionally.
var kernels = []kernel{{name: "neon", nr: 16, fn: kernelNEON}, goKernel}
