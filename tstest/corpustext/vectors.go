package corpustext

import (
	"math"
	"testing"
)

// Cosine is the cosine of a and b, summed in float64. It is NaN when either
// has no length, and a comparison with NaN is false: compare through
// AtLeast, AtMost or CheckVectors, which fail on such a vector first.
func Cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// CheckVector fails tb unless v has dim values, every one finite, and a
// norm above zero: a kernel that returns zeros, NaN or a short vector fails
// here, where a cosine or a difference compared with a bound would let it
// pass. It reports whether v passed.
func CheckVector(tb testing.TB, name string, v []float32, dim int) bool {
	tb.Helper()
	if len(v) != dim {
		tb.Errorf("%s: %d values, want %d", name, len(v), dim)
		return false
	}
	var n float64
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			tb.Errorf("%s: value %d is %g", name, i, x)
			return false
		}
		n += float64(x) * float64(x)
	}
	if !(n > 0) {
		tb.Errorf("%s: a vector of zeros", name)
		return false
	}
	return true
}

// CheckUnit fails tb unless v passes CheckVector and its norm is within tol
// of 1.
func CheckUnit(tb testing.TB, name string, v []float32, dim int, tol float64) {
	tb.Helper()
	if !CheckVector(tb, name, v, dim) {
		return
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n = math.Sqrt(n); !(math.Abs(n-1) <= tol) {
		tb.Errorf("%s: norm %g, want 1 (±%g)", name, n, tol)
	}
}

// pair checks both vectors as CheckVector does, at want's length (got's
// when want is empty, so that an empty pair fails too), and returns their
// cosine, or NaN when one failed.
func pair(tb testing.TB, name string, got, want []float32) float64 {
	tb.Helper()
	dim := len(want)
	if dim == 0 {
		dim = max(len(got), 1)
	}
	okGot, okWant := CheckVector(tb, name, got, dim), CheckVector(tb, name+" (the reference)", want, dim)
	if !okGot || !okWant {
		return math.NaN()
	}
	return Cosine(got, want)
}

// AtLeast fails tb unless got and want are vectors CheckVector passes, of
// one length, whose cosine is at least floor; it returns the cosine (NaN
// when a vector failed).
func AtLeast(tb testing.TB, name string, got, want []float32, floor float64) float64 {
	tb.Helper()
	c := pair(tb, name, got, want)
	if !math.IsNaN(c) && !(c >= floor) {
		tb.Errorf("%s: cosine %.6f, want ≥ %g", name, c, floor)
	}
	return c
}

// AtMost fails tb unless got and other are vectors CheckVector passes, of
// one length, whose cosine is at most ceiling: two vectors that must
// differ.
func AtMost(tb testing.TB, name string, got, other []float32, ceiling float64) float64 {
	tb.Helper()
	c := pair(tb, name, got, other)
	if !math.IsNaN(c) && !(c <= ceiling) {
		tb.Errorf("%s: cosine %.6f, want ≤ %g", name, c, ceiling)
	}
	return c
}

// MaxAbsDiff is the largest |a[i] − b[i]|, +Inf when the lengths differ,
// either is empty or a value is not finite: a bound on it then fails.
func MaxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		x := math.Abs(float64(a[i]) - float64(b[i]))
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return math.Inf(1)
		}
		d = max(d, x)
	}
	return d
}

// CheckVectors fails tb unless got has one vector for each name and each
// golden vector in want, each passing AtLeast floor against its golden one,
// naming the text (names) and the reference (ref); it returns the least
// and the mean cosine, for the test's log (NaN when a vector failed).
func CheckVectors(tb testing.TB, names []string, got, want [][]float32, floor float64, ref string) (least, mean float64) {
	tb.Helper()
	if len(got) != len(want) || len(names) != len(want) || len(want) == 0 {
		tb.Errorf("%d vectors for %d texts and %d of %s's: want one for each, and some", len(got), len(names), len(want), ref)
		return math.NaN(), math.NaN()
	}
	least = 1
	var sum float64
	for i := range got {
		c := AtLeast(tb, names[i]+" against "+ref+"'s vector", got[i], want[i], floor)
		least, sum = min(least, c), sum+c
	}
	return least, sum / float64(len(got))
}
