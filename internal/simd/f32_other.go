//go:build !amd64

package simd

func scoresF32(out, q, kt []float32, ld int) { scoresGo(out, q, kt, ld) }

func weightedF32(out, p, v []float32, ldv int, scale float32) { weightedGo(out, p, v, ldv, scale) }

func softmaxF32(x []float32, scale float32) float32 { return softmaxGo(x, scale) }

func geluF32(x []float32) { geluGo(x) }

func scores2F32(out0, out1, q0, q1, kt []float32, ld int) {
	scoresGo(out0, q0, kt, ld)
	scoresGo(out1, q1, kt, ld)
}

func weighted2F32(out0, out1, p0, p1, v []float32, ldv int, scale0, scale1 float32) {
	weightedGo(out0, p0, v, ldv, scale0)
	weightedGo(out1, p1, v, ldv, scale1)
}
