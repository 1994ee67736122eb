package simd

import "golang.org/x/sys/cpu"

// Implemented in q4q8_arm64.s and w8q8_arm64.s (their loops in
// q8_arm64.h).
func q4q8NEONDot(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)
func w8q8NEONDot(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)

// q4q8Kernels and w8q8Kernels list the kernels this CPU runs, fastest
// first.
var (
	q4q8Kernels = q8Kernels(&q4Format, q4q8NEONDot)
	w8q8Kernels = q8Kernels(&w8Format, w8q8NEONDot)
)

// q8Kernels is neonDot and the Go kernel, or the Go kernel alone: SDOT is
// the ARMv8.2 dot-product extension (most arm64 CPUs since 2018; not the
// Raspberry Pi 4's Cortex-A72).
func q8Kernels(f *wFormat, neonDot asmKernel) []q8Kernel {
	if !cpu.ARM64.HasASIMDDP {
		return []q8Kernel{q8Go(f)}
	}
	return []q8Kernel{asmQ8("neon-dot", f, neonDot), q8Go(f)}
}

// quantizeAsm is nil: rows are quantized in Go.
var quantizeAsm func(x []float32, q, d []byte)
