//go:build amd64 || arm64

package simd

import "unsafe"

// asmKernel is an assembly kernel, q8Kernel.fn's arguments as pointers.
type asmKernel func(w, a *byte, nb, tiles int, y *float32, ldy int, bias *float32)

// asmQ8 is the q8Kernel name that runs fn on weights of format f, once
// its operands' bounds are checked.
func asmQ8(name string, f *wFormat, fn asmKernel) q8Kernel {
	return q8Kernel{name: name, fn: func(w, a []byte, nb, tiles int, y []float32, ldy int, bias []float32) {
		_ = w[nb*f.block-1]
		_ = a[tiles*nb*aBlockBytes-1]
		_ = y[(tiles*tokenTile-1)*ldy+RowGroup-1]
		_ = bias[RowGroup-1]
		fn(unsafe.SliceData(w), unsafe.SliceData(a), nb, tiles, unsafe.SliceData(y), ldy, unsafe.SliceData(bias))
	}}
}
