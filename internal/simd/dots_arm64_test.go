package simd

import "testing"

// TestNEONKernel checks that arm64 scans with the NEON kernel: dotsGo is
// thirty times slower.
func TestNEONKernel(t *testing.T) {
	if dots == nil || dotsWidth != 32 {
		t.Fatal("arm64 has no kernel")
	}
}
