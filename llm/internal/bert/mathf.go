package bert

import "math"

// layerNorm sets x to (x − mean)/√(var + eps)·w + b, as e5.c's
// add_layernorm does after the residual add.
func layerNorm(x, w, b []float32, eps float32) {
	var mean float32
	for _, v := range x {
		mean += v
	}
	mean /= float32(len(x))
	var variance float32
	for _, v := range x {
		d := v - mean
		variance += d * d
	}
	variance /= float32(len(x))
	inv := 1 / float32(math.Sqrt(float64(variance+eps)))
	for i, v := range x {
		x[i] = (v-mean)*inv*w[i] + b[i]
	}
}
