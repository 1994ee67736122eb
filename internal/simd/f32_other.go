//go:build !amd64

package simd

func scoresF32(out, q, kt []float32, ld int) { scoresGo(out, q, kt, ld) }

func weightedF32(out, p, v []float32, ldv int, scale float32) { weightedGo(out, p, v, ldv, scale) }

func softmaxF32(x []float32, scale float32) float32 { return softmaxGo(x, scale) }

func geluF32(x []float32) { geluGo(x) }
