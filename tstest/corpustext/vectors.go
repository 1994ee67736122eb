package corpustext

import (
	"math"
	"testing"
)

// Cosine is the cosine of a and b, summed in float64.
func Cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// CheckVectors fails tb for each of got whose cosine to its golden vector
// in want is below floor, naming the text (names) and the reference (ref),
// and returns the least and the mean cosine, for the test's log.
func CheckVectors(tb testing.TB, names []string, got, want [][]float32, floor float64, ref string) (least, mean float64) {
	tb.Helper()
	least = 1
	var sum float64
	for i := range got {
		c := Cosine(got[i], want[i])
		if c < floor {
			tb.Errorf("%s: cosine %.5f to %s's vector, want ≥ %g", names[i], c, ref, floor)
		}
		least, sum = min(least, c), sum+c
	}
	return least, sum / float64(max(len(got), 1))
}
