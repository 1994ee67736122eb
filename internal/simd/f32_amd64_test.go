package simd

import "testing"

// TestF32KernelsGo runs the fp32 checks on the Go versions, which this CPU
// would otherwise not run.
func TestF32KernelsGo(t *testing.T) {
	defer func(old bool) { useAVX2 = old }(useAVX2)
	useAVX2 = false
	checkF32(t)
}
