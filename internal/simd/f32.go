package simd

// The fp32 kernels of the encoder's attention and feed-forward layer. Each
// has a Go version here, the reference the assembly is tested against and
// what other CPUs run.

// Scores sets out[j] = Σ_e q[e]·kt[e·ld + j] for every j < len(out): a
// query's dot products with the keys, which kt holds transposed (one row of
// ld values per dimension of q).
func Scores(out, q, kt []float32, ld int) {
	if len(out) == 0 {
		return
	}
	_ = kt[(len(q)-1)*ld+len(out)-1]
	scoresF32(out, q, kt, ld)
}

// Scores2 is Scores for two queries against the same keys, each load of
// kt serving both.
func Scores2(out0, out1, q0, q1, kt []float32, ld int) {
	if len(out0) == 0 {
		return
	}
	_ = out1[len(out0)-1]
	_ = q1[len(q0)-1]
	_ = kt[(len(q0)-1)*ld+len(out0)-1]
	scores2F32(out0, out1, q0, q1, kt, ld)
}

// WeightedSum sets out[e] = scale·Σ_s p[s]·v[s·ldv + e] for every
// e < len(out): the attention weights p applied to the value rows of v,
// scale normalizing them.
func WeightedSum(out, p, v []float32, ldv int, scale float32) {
	if len(p) == 0 {
		clear(out)
		return
	}
	_ = v[(len(p)-1)*ldv+len(out)-1]
	weightedF32(out, p, v, ldv, scale)
}

// WeightedSum2 is WeightedSum for two queries' weights over the same
// value rows.
func WeightedSum2(out0, out1, p0, p1, v []float32, ldv int, scale0, scale1 float32) {
	if len(p0) == 0 {
		clear(out0)
		clear(out1)
		return
	}
	_ = out1[len(out0)-1]
	_ = p1[len(p0)-1]
	_ = v[(len(p0)-1)*ldv+len(out0)-1]
	weighted2F32(out0, out1, p0, p1, v, ldv, scale0, scale1)
}

// Softmax sets x[i] = e^(scale·x[i] − scale·max(x)) and returns their sum,
// the unnormalized softmax of scale·x (scale > 0).
func Softmax(x []float32, scale float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return softmaxF32(x, scale)
}

// GELU sets x[i] = 0.5·x·(1 + erf(x/√2)), the exact (erf) GELU with
// Erf32.
func GELU(x []float32) { geluF32(x) }

func scoresGo(out, q, kt []float32, ld int) {
	clear(out)
	for e, qe := range q {
		row := kt[e*ld : e*ld+len(out)]
		for j, k := range row {
			out[j] += qe * k
		}
	}
}

func weightedGo(out, p, v []float32, ldv int, scale float32) {
	clear(out)
	for s, ps := range p {
		row := v[s*ldv : s*ldv+len(out)]
		for e, x := range row {
			out[e] += ps * x
		}
	}
	for e := range out {
		out[e] *= scale
	}
}

func softmaxGo(x []float32, scale float32) float32 {
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	sm := scale * m
	var sum float32
	for i, v := range x {
		x[i] = Exp32(scale*v - sm)
		sum += x[i]
	}
	return sum
}

func geluGo(x []float32) {
	for i, v := range x {
		x[i] = 0.5 * v * (1 + Erf32(v*0.70710678118654752440))
	}
}
