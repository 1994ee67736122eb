package simd

import "testing"

// TestNEONFirst checks that arm64 lists the NEON kernel first: an encoder
// takes the first kernel listed, and the pure Go one is about ten times
// slower.
func TestNEONFirst(t *testing.T) {
	var names []string
	for _, k := range Kernels {
		names = append(names, k.Name)
	}
	if len(names) == 0 || names[0] != "neon" {
		t.Fatalf("kernels on arm64 = %v, want neon first", names)
	}
}
