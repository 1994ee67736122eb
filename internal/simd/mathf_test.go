package simd

import (
	"math"
	"testing"
)

func TestErf32(t *testing.T) {
	var worst float64
	for x := -6.0; x <= 6; x += 1e-3 {
		worst = max(worst, math.Abs(float64(Erf32(float32(x)))-math.Erf(x)))
	}
	if worst > 1e-6 {
		t.Errorf("Erf32: max |error| %g over [-6, 6], want ≤ 1e-6", worst)
	}
}

func TestExp32(t *testing.T) {
	var worst float64
	for x := -80.0; x <= 10; x += 1e-3 {
		x32 := float32(x)
		want := math.Exp(float64(x32))
		worst = max(worst, math.Abs(float64(Exp32(x32))-want)/want)
	}
	if worst > 5e-7 {
		t.Errorf("Exp32: max relative error %g over [-80, 10], want ≤ 5e-7", worst)
	}
	if Exp32(-100) != 0 || Exp32(0) != 1 {
		t.Errorf("Exp32(-100) = %g, Exp32(0) = %g; want 0 and 1", Exp32(-100), Exp32(0))
	}
}
