package simd

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Implemented in q4q8_arm64.s, with the arguments of kernel.fn as pointers.
func q4q8NEONDot(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)

// q4q8Kernels lists the Q4×Q8 q4q8Kernels this CPU runs, fastest first: SDOT is
// the ARMv8.2 dot-product extension (most arm64 CPUs since 2018; not the
// Raspberry Pi 4's Cortex-A72), which gets the Go kernel.
var q4q8Kernels = func() []q4q8Kernel {
	if !cpu.ARM64.HasASIMDDP {
		return []q4q8Kernel{goQ4Q8}
	}
	return []q4q8Kernel{{name: "neon-dot", fn: func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32) {
		_ = w[nb*wBlockBytes-1]
		_ = a[tiles*nb*aBlockBytes-1]
		_ = y[(tiles*tokenTile-1)*ldy+RowGroup-1]
		_ = bias[RowGroup-1]
		q4q8NEONDot(unsafe.SliceData(w), unsafe.SliceData(a), nb, tiles, unsafe.SliceData(y), ldy, unsafe.SliceData(bias))
	}}, goQ4Q8}
}()

// quantizeAsm is nil: rows are quantized in Go.
var quantizeAsm func(x []float32, q, d []byte)
