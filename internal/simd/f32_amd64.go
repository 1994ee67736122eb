package simd

import "golang.org/x/sys/cpu"

// Implemented in f32_amd64.s, for n (and hd) multiples of 8.
func scoresAVX2(out, q, kt *float32, ld, hd, n int)
func weightedAVX2(out, p *float32, n int, v *float32, ldv, hd int, scale float32)
func scores2AVX2(out0, out1, q0, q1, kt *float32, ld, hd, n int)
func weighted2AVX2(out0, out1, p0, p1 *float32, n int, v *float32, ldv int, scale0, scale1 float32)
func maxAVX2(x *float32, n int) float32
func expSumAVX2(x *float32, n int, scale, sm float32) float32
func geluAVX2(x *float32, n int)

// useAVX2 is whether the fp32 kernels run in assembly; tests turn it off to
// run the Go versions on the same inputs.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func scoresF32(out, q, kt []float32, ld int) {
	n := len(out) &^ 7
	if !useAVX2 || n == 0 || len(q) == 0 {
		scoresGo(out, q, kt, ld)
		return
	}
	scoresAVX2(&out[0], &q[0], &kt[0], ld, len(q), n)
	if n < len(out) {
		tail := out[n:]
		clear(tail)
		for e, qe := range q {
			for j := range tail {
				tail[j] += qe * kt[e*ld+n+j]
			}
		}
	}
}

func weightedF32(out, p, v []float32, ldv int, scale float32) {
	if !useAVX2 || len(out)%8 != 0 || len(out) == 0 {
		weightedGo(out, p, v, ldv, scale)
		return
	}
	weightedAVX2(&out[0], &p[0], len(p), &v[0], ldv, len(out), scale)
}

func softmaxF32(x []float32, scale float32) float32 {
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		return softmaxGo(x, scale)
	}
	m := maxAVX2(&x[0], n)
	for _, v := range x[n:] {
		m = max(m, v)
	}
	sm := scale * m
	sum := expSumAVX2(&x[0], n, scale, sm)
	for i, v := range x[n:] {
		x[n+i] = Exp32(scale*v - sm)
		sum += x[n+i]
	}
	return sum
}

func geluF32(x []float32) {
	n := len(x) &^ 7
	if useAVX2 && n > 0 {
		geluAVX2(&x[0], n)
	}
	if !useAVX2 {
		n = 0
	}
	geluGo(x[n:])
}

func scores2F32(out0, out1, q0, q1, kt []float32, ld int) {
	n := len(out0) &^ 7
	if !useAVX2 || n == 0 || len(q0) == 0 {
		scoresF32(out0, q0, kt, ld)
		scoresF32(out1, q1, kt, ld)
		return
	}
	scores2AVX2(&out0[0], &out1[0], &q0[0], &q1[0], &kt[0], ld, len(q0), n)
	if n < len(out0) {
		scoresGo(out0[n:], q0, kt[n:], ld)
		scoresGo(out1[n:len(out0)], q1, kt[n:], ld)
	}
}

func weighted2F32(out0, out1, p0, p1, v []float32, ldv int, scale0, scale1 float32) {
	if !useAVX2 || len(out0) != 32 {
		weightedF32(out0, p0, v, ldv, scale0)
		weightedF32(out1, p1, v, ldv, scale1)
		return
	}
	weighted2AVX2(&out0[0], &out1[0], &p0[0], &p1[0], len(p0), &v[0], ldv, scale0, scale1)
}
