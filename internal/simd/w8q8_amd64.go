package simd

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Implemented in w8q8_amd64.s, with the arguments of w8q8Kernel.fn as
// pointers.
func w8q8VNNI(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)
func w8q8AVX2(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)

// w8q8Kernels lists the W8×Q8 kernels this CPU runs, fastest first.
var w8q8Kernels = func() []w8q8Kernel {
	var ks []w8q8Kernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI {
		ks = append(ks, asmW8Q8("avx512vnni", w8q8VNNI))
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, asmW8Q8("avx2", w8q8AVX2))
	}
	return append(ks, goW8Q8)
}()

func asmW8Q8(name string, fn func(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)) w8q8Kernel {
	return w8q8Kernel{name: name, fn: func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32) {
		_ = w[nb*w8BlockBytes-1]
		_ = a[tiles*nb*aBlockBytes-1]
		_ = y[(tiles*tokenTile-1)*ldy+RowGroup-1]
		_ = bias[RowGroup-1]
		fn(unsafe.SliceData(w), unsafe.SliceData(a), nb, tiles, unsafe.SliceData(y), ldy, unsafe.SliceData(bias))
	}}
}
