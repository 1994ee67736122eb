package simd

import "math"

// Quantize writes v scaled into [-127, 127] to dst, which must be as long as
// v, and returns the scale: v[i] ≈ scale·dst[i]. -128 is never used, so that
// a kernel may negate a value, and a sum of two products fits an int16.
// The zero vector has scale 0.
func Quantize(dst []int8, v []float32) float32 {
	dst = dst[:len(v)]
	var peak float32
	nan := false
	for _, x := range v {
		a := abs(x)
		if a > peak {
			peak = a
		}
		nan = nan || a != a
	}
	if peak == 0 || nan || math.IsInf(float64(peak), 0) {
		clear(dst)
		return 0
	}
	// |x·inv| ≤ 127 (give or take a rounding), so rounding half away from
	// zero stays within [-127, 127].
	inv := 127 / peak
	for i, x := range v {
		r := x * inv
		// ±0.5 with r's sign, without a branch: the signs are random.
		half := math.Float32frombits(math.Float32bits(r)&(1<<31) | math.Float32bits(0.5))
		dst[i] = int8(r + half)
	}
	return peak / 127
}

func abs(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// Dots sets out[i] to the dot product of q with the i-th row of rows, which
// holds len(out) rows of len(q) values one after another. Values must lie in
// [-127, 127], as Quantize writes them.
func Dots(q, rows []int8, out []int32) {
	dim := len(q)
	if len(out) == 0 || dim == 0 {
		clear(out)
		return
	}
	rows = rows[:len(out)*dim]
	if dots != nil && dim%dotsWidth == 0 {
		dots(q, rows, out)
		return
	}
	dotsGo(q, rows, out)
}

// dotsGo is Dots in portable Go: the reference the kernels are tested
// against, and the path for a dimension they do not take.
func dotsGo(q, rows []int8, out []int32) {
	dim := len(q)
	for i := range out {
		row := rows[i*dim : (i+1)*dim]
		row = row[:len(q)] // lets the compiler drop the bounds checks below
		var s0, s1, s2, s3 int32
		j := 0
		for ; j+4 <= len(q); j += 4 {
			s0 += int32(q[j]) * int32(row[j])
			s1 += int32(q[j+1]) * int32(row[j+1])
			s2 += int32(q[j+2]) * int32(row[j+2])
			s3 += int32(q[j+3]) * int32(row[j+3])
		}
		for ; j < len(q); j++ {
			s0 += int32(q[j]) * int32(row[j])
		}
		out[i] = s0 + s1 + s2 + s3
	}
}
