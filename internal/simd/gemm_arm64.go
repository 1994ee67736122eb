package simd

// Implemented in gemm_arm64.s.
func kernelNEON(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)

// Kernels lists the fp32 kernels this CPU runs, fastest first. NEON (ASIMD) needs
// no feature check: Go's arm64 port requires it, and its runtime's own
// memmove and bytealg use it unconditionally.
var Kernels = []Kernel{{Name: "neon", NR: 16, fn: kernelNEON}, goKernel}
