package simd

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Implemented in w8q8_arm64.s, with the arguments of w8q8Kernel.fn as
// pointers.
func w8q8NEONDot(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)

// w8q8Kernels lists the W8×Q8 kernels this CPU runs, fastest first: as for
// q4q8Kernels, a CPU without the dot-product extension gets the Go kernel.
var w8q8Kernels = func() []w8q8Kernel {
	if !cpu.ARM64.HasASIMDDP {
		return []w8q8Kernel{goW8Q8}
	}
	return []w8q8Kernel{{name: "neon-dot", fn: func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32) {
		_ = w[nb*w8BlockBytes-1]
		_ = a[tiles*nb*aBlockBytes-1]
		_ = y[(tiles*tokenTile-1)*ldy+RowGroup-1]
		_ = bias[RowGroup-1]
		w8q8NEONDot(unsafe.SliceData(w), unsafe.SliceData(a), nb, tiles, unsafe.SliceData(y), ldy, unsafe.SliceData(bias))
	}}, goW8Q8}
}()
