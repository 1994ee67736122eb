package uselite

import (
	"math"
	"testing"
)

func TestExpNonPositive(t *testing.T) {
	var worst float64
	for x := float32(0); x > -100; x -= 0.00137 {
		want := math.Exp(float64(x))
		got := float64(expNonPositive(x))
		if x < -87 {
			if got != 0 {
				t.Fatalf("exp(%v) = %v, want 0 below -87", x, got)
			}
			continue
		}
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("worst relative error %.3g, want ≤ 3e-7 (about 2 ulp)", worst)
	}
	t.Logf("worst relative error %.3g", worst)
}
