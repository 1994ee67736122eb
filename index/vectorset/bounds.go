package vectorset

import (
	"math"

	"github.com/vaultask/vaultask/internal/simd"
)

// quantSlack is the most a component of a quantised vector, scale·row[i],
// may be off from the float it stands for, in units of its scale: half a
// step for the rounding, plus room for the float32 arithmetic of
// simd.Quantize (a few ulps of values up to 127, under 1e-4).
const quantSlack = 0.5 + 1e-3

// cosineSlack bounds how far CosineDistance, summed in float32 over dim
// components, may be from the real cosine distance: the dot product's and
// both norms' rounding (each at most γ_(dim+1) of the sum of absolute
// products, which Cauchy–Schwarz bounds by the norms), the square roots,
// the division, the subtraction and the final rounding to float32; doubled
// for safety.
func cosineSlack(dim int) float64 {
	const u = 0x1p-24 // float32's unit roundoff
	n := float64(dim + 2)
	gamma := n * u / (1 - n*u)
	return 2 * (3*gamma + 10*u)
}

// Bound is a range that holds a note's distance to a query.
type Bound struct{ Lo, Hi float64 }

// Bounds bounds, for each note of docIDs, the least CosineDistance from vec
// to one of its chunks' vectors the set holds, open ones only with
// openOnly, from the int8 copies instead of the vectors. A note with no
// such vector, or with one unusable, is left out.
//
// The approximate distance of a chunk is the cosine distance between vec
// and its dequantised vector scale·row, over the float vector's own norm.
// Each component of the dequantised vector is off by at most
// quantSlack·scale, so the dot product by at most quantSlack·scale·‖vec‖₁,
// the distance by that over ‖vec‖·‖v‖. The dot product of vec with row is
// taken in two int8 passes (see queryParts), off by at most the query's
// remainder times the row's norm, which the slack adds too; cosineSlack adds
// CosineDistance's own rounding.
func (s *Set) Bounds(vec []float32, docIDs []string, openOnly bool) map[string]Bound {
	q := splitQuery(vec)
	fp := cosineSlack(s.dim)
	// The most the query's remainder can add to a row's dot product:
	// ‖rest‖₂·‖row‖₂, a row's norm at most 127·√dim.
	restDot := q.rest * 127 * math.Sqrt(float64(s.dim))

	s.mu.RLock()
	defer s.mu.RUnlock()
	var slots []int
	var notes []string // the note of each run of slots, ends[i] its end
	var ends []int
	for _, doc := range docIDs {
		n := len(slots)
		for _, slot := range s.bydoc[doc] {
			if !openOnly || s.open[slot] {
				slots = append(slots, slot)
			}
		}
		if len(slots) > n {
			notes, ends = append(notes, doc), append(ends, len(slots))
		}
	}
	dots := s.dots(q, slots)

	out := make(map[string]Bound, len(notes))
	start := 0
	for i, doc := range notes {
		b := Bound{Lo: math.Inf(1), Hi: math.Inf(1)}
		ok := true
		for j := start; j < ends[i] && ok; j++ {
			slot := slots[j]
			scale := float64(s.scale[slot])
			den := q.norm * s.norm[slot]
			d := 1 - scale*dots[j]/den
			slack := (quantSlack*q.l1+restDot)*scale/den + fp + 1e-12
			ok = scale != 0 && den != 0 && !math.IsInf(den, 0) && !math.IsNaN(d) && !math.IsInf(d, 0) && !math.IsNaN(slack) && !math.IsInf(slack, 0)
			b.Lo, b.Hi = min(b.Lo, d-slack), min(b.Hi, d+slack)
		}
		if ok {
			out[doc] = b
		}
		start = ends[i]
	}
	return out
}

// dots are q's dot products with the rows of slots, through the SIMD
// kernel: the rows copied a batch at a time next to one another, as it
// takes them. The caller holds s.mu.
func (s *Set) dots(q queryParts, slots []int) []float64 {
	const batch = 64
	out := make([]float64, len(slots))
	buf := make([]int8, batch*s.dim)
	hi, lo := make([]int32, batch), make([]int32, batch)
	at := make([]int, 0, batch)
	flush := func() {
		n := len(at)
		simd.Dots(q.hi, buf[:n*s.dim], hi[:n])
		simd.Dots(q.lo, buf[:n*s.dim], lo[:n])
		for j, i := range at {
			out[i] = q.hiScale*float64(hi[j]) + q.loScale*float64(lo[j])
		}
		at = at[:0]
	}
	for i, slot := range slots {
		copy(buf[len(at)*s.dim:], s.row(slot))
		at = append(at, i)
		if len(at) == batch {
			flush()
		}
	}
	if len(at) > 0 {
		flush()
	}
	return out
}

// queryParts is a query vector q as the bounds take it: two int8 vectors,
// hi for q and lo for what hi leaves of it, so that
// q = hiScale·hi + loScale·lo + r, and rest is r's Euclidean norm. A row's
// dot product with q is then two int8 dot products through the SIMD kernel,
// exact in int32, and at most rest·‖row‖₂ off: rest is about 1/30,000 of
// q's norm, far below what the rows' own quantisation allows. norm and l1
// are q's Euclidean and L1 norms, from its float values.
type queryParts struct {
	hi, lo           []int8
	hiScale, loScale float64
	rest             float64
	norm, l1         float64
}

// splitQuery splits vec into its queryParts.
func splitQuery(vec []float32) queryParts {
	q := queryParts{hi: make([]int8, len(vec)), lo: make([]int8, len(vec))}
	q.hiScale = float64(simd.Quantize(q.hi, vec))
	left := make([]float32, len(vec))
	for i, x := range vec {
		left[i] = float32(float64(x) - q.hiScale*float64(q.hi[i]))
	}
	q.loScale = float64(simd.Quantize(q.lo, left))
	var rest float64
	for i, x := range vec {
		f := float64(x)
		q.norm += f * f
		q.l1 += math.Abs(f)
		r := f - q.hiScale*float64(q.hi[i]) - q.loScale*float64(q.lo[i])
		rest += r * r
	}
	q.norm = math.Sqrt(q.norm)
	// Rounded up: the float64 sums above are off by far less than this.
	q.rest = math.Sqrt(rest) * (1 + 1e-9)
	return q
}
