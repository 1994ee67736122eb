package simd

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Implemented in q4q8_amd64.s and w8q8_amd64.s (their loops in
// q8_amd64.h), and q8_amd64.s.
func q4q8VNNI(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)
func q4q8AVX2(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)
func w8q8VNNI(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)
func w8q8AVX2(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)
func quantizeAVX2(x *float32, nb int, q *byte, d *float32)

// q4q8Kernels and w8q8Kernels list the kernels this CPU runs, fastest
// first.
var (
	q4q8Kernels = q8Kernels(&q4Format, q4q8VNNI, q4q8AVX2)
	w8q8Kernels = q8Kernels(&w8Format, w8q8VNNI, w8q8AVX2)
)

func q8Kernels(f *wFormat, vnni, avx2 asmKernel) []q8Kernel {
	var ks []q8Kernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI {
		ks = append(ks, asmQ8("avx512vnni", f, vnni))
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, asmQ8("avx2", f, avx2))
	}
	return append(ks, q8Go(f))
}

// quantizeAsm quantizes a row's blocks (x, a multiple of 32 values) into
// the packed layout, its first block's bytes at q[0] and scale at d[0].
var quantizeAsm = func() func(x []float32, q, d []byte) {
	if !cpu.X86.HasAVX2 {
		return nil
	}
	return func(x []float32, q, d []byte) {
		nb := len(x) / BlockLen
		_ = q[(nb-1)*aBlockBytes+BlockLen-1]
		_ = d[(nb-1)*aBlockBytes+32+3]
		quantizeAVX2(&x[0], nb, &q[0], (*float32)(unsafe.Pointer(&d[0])))
	}
}()
