package simd

// dotsWidth is the bytes dotsNEON takes a step: a dimension must be a
// multiple of it.
const dotsWidth = 32

// Implemented in dots_arm64.s.
func dotsNEON(q *int8, rows *int8, dim int, n int, out *int32)

// dots is the NEON kernel: NEON (ASIMD) needs no feature check, as Go's
// arm64 port requires it.
var dots = func(q, rows []int8, out []int32) {
	dotsNEON(&q[0], &rows[0], len(q), len(out), &out[0])
}
