package simd

import "math"

// Erf32 is erf in float32 as a rational function of x on [−4, 4] (the
// approximation Eigen and XLA use; error a few ulp), ±1 beyond.
func Erf32(x float32) float32 {
	x = min(max(x, -4), 4)
	x2 := x * x
	p := float32(-2.72614225801306e-10)
	p = p*x2 + 2.77068142495902e-08
	p = p*x2 - 2.10102402082508e-06
	p = p*x2 - 5.69250639462346e-05
	p = p*x2 - 7.34990630326855e-04
	p = p*x2 - 2.95459980854025e-03
	p = p*x2 - 1.60960333262415e-02
	q := float32(-1.45660718464996e-05)
	q = q*x2 - 2.13374055278905e-04
	q = q*x2 - 1.68282697438203e-03
	q = q*x2 - 7.37332916720468e-03
	q = q*x2 - 1.42647390514189e-02
	return x * p / q
}

// Exp32 is e^x in float32 for the softmax (x ≤ 0 there): x = n·ln2 + r
// with |r| ≤ ln2/2 (about), e^r by its degree-6 Taylor polynomial (relative error
// under 2e-7 on that interval), times 2ⁿ put into the exponent bits.
func Exp32(x float32) float32 {
	if x < -87 {
		return 0
	}
	x = min(x, 88)
	const log2e, ln2hi, ln2lo = 1.44269504088896341, 0.693359375, -2.12194440e-4
	// n = x·log2(e) rounded to an integer: adding and taking away 1.5·2²³
	// leaves no bits below the units.
	const round = 1.5 * (1 << 23)
	n := (x*log2e + round) - round
	r := x - n*ln2hi - n*ln2lo
	p := float32(1.0 / 720)
	p = p*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}
