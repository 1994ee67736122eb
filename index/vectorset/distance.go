package vectorset

import (
	"encoding/binary"
	"math"
)

// CosineDistance is the cosine distance between v and q as sqlite-vec's
// vec_distance_cosine computes it (distance_cosine_float in sqlite-vec.c,
// v0.1.6), bit for bit on amd64: the dot product and both squared norms
// summed in float32 in order, each product rounded to float32 before it is
// added (the conversions keep Go from fusing a multiply and an add, which C
// compiled without FMA does not), then 1 − dot/(√‖v‖²·√‖q‖²) in float64,
// rounded to float32. The rescore orders its candidates by it, so it ranks
// as the SQL rescore did, ties and all. v and q are equally long.
func CosineDistance(v, q []float32) float64 {
	q = q[:len(v)]
	var dot, vv, qq float32
	for i, x := range v {
		y := q[i]
		dot += float32(x * y)
		vv += float32(x * x)
		qq += float32(y * y)
	}
	return float64(float32(1 - float64(dot)/(math.Sqrt(float64(vv))*math.Sqrt(float64(qq)))))
}

// CosineDistanceBytes is CosineDistance of v given as its float32 values in
// little-endian bytes, as the index stores a vector, read as they are
// summed: the same arithmetic, without a pass to decode v first.
func CosineDistanceBytes(v []byte, q []float32) float64 {
	v = v[:4*len(q)]
	var dot, vv, qq float32
	for _, y := range q {
		x := math.Float32frombits(binary.LittleEndian.Uint32(v))
		v = v[4:]
		dot += float32(x * y)
		vv += float32(x * x)
		qq += float32(y * y)
	}
	return float64(float32(1 - float64(dot)/(math.Sqrt(float64(vv))*math.Sqrt(float64(qq)))))
}

// Norm is v's Euclidean norm, summed in float64.
func Norm(v []float32) float64 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	return math.Sqrt(sum)
}
