package simd

import "golang.org/x/sys/cpu"

// dotsWidth is the bytes dotsAVX2 takes a step: a dimension must be a
// multiple of it.
const dotsWidth = 32

// Implemented in dots_amd64.s: out[i] = Σ abs[j]·(sign(q[j])·rows[i·dim+j]),
// which is q·row with the product in the only form VPMADDUBSW takes
// (unsigned times signed bytes).
func dotsAVX2(abs *uint8, q *int8, rows *int8, dim int, n int, out *int32)

// dots is the assembly kernel this CPU runs, nil for none.
var dots = func() func(q, rows []int8, out []int32) {
	if !cpu.X86.HasAVX2 {
		return nil
	}
	return func(q, rows []int8, out []int32) {
		var buf [512]uint8
		abs := buf[:0]
		if len(q) > len(buf) {
			abs = make([]uint8, 0, len(q))
		}
		for _, x := range q {
			abs = append(abs, uint8(max(x, -x)))
		}
		dotsAVX2(&abs[0], &q[0], &rows[0], len(q), len(out), &out[0])
	}
}()
