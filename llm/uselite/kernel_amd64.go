package uselite

import "golang.org/x/sys/cpu"

// Implemented in kernel_amd64.s.
func kernelAVX512(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)
func kernelAVX2(k int, a *float32, lda int, p *float32, c *float32, ldc int, floor float32)

// kernels lists the kernels this CPU runs, fastest first.
var kernels = func() []kernel {
	var ks []kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, kernel{name: "avx512", nr: 32, fn: kernelAVX512})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, kernel{name: "avx2", nr: 16, fn: kernelAVX2})
	}
	return append(ks, goKernel)
}()
