package uselite

import "testing"

// TestNEONFirst checks that arm64 runs the model on the NEON kernel: Load
// takes the first kernel listed, and the pure Go one is about ten times
// slower.
func TestNEONFirst(t *testing.T) {
	var names []string
	for _, k := range kernels {
		names = append(names, k.name)
	}
	if len(names) == 0 || names[0] != "neon" {
		t.Fatalf("kernels on arm64 = %v, want neon first", names)
	}
}
