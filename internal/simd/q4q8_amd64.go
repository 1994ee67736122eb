package simd

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Implemented in q4q8_amd64.s, with the arguments of kernel.fn as pointers.
func q4q8VNNI(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)
func q4q8AVX2(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)
func quantizeAVX2(x *float32, nb int, q *byte, d *float32)

// q4q8Kernels lists the Q4×Q8 q4q8Kernels this CPU runs, fastest first.
var q4q8Kernels = func() []q4q8Kernel {
	var ks []q4q8Kernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI {
		ks = append(ks, asmQ4Q8("avx512vnni", q4q8VNNI))
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, asmQ4Q8("avx2", q4q8AVX2))
	}
	return append(ks, goQ4Q8)
}()

func asmQ4Q8(name string, fn func(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)) q4q8Kernel {
	return q4q8Kernel{name: name, fn: func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32) {
		_ = w[nb*wBlockBytes-1]
		_ = a[tiles*nb*aBlockBytes-1]
		_ = y[(tiles*tokenTile-1)*ldy+RowGroup-1]
		_ = bias[RowGroup-1]
		fn(unsafe.SliceData(w), unsafe.SliceData(a), nb, tiles, unsafe.SliceData(y), ldy, unsafe.SliceData(bias))
	}}
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
