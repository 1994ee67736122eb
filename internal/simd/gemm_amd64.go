package simd

import "golang.org/x/sys/cpu"

// Implemented in gemm_amd64.s.
func kernelAVX512(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)
func kernelAVX2(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)

// Kernels lists the fp32 kernels this CPU runs, fastest first.
var Kernels = func() []Kernel {
	var ks []Kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, Kernel{Name: "avx512", NR: 32, fn: kernelAVX512})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, Kernel{Name: "avx2", NR: 16, fn: kernelAVX2})
	}
	return append(ks, goKernel)
}()
