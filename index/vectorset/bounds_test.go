package vectorset

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vaultask/vaultask/internal/simd"
)

// The bounds hold for the worst a quantised vector can be: every component
// just under half a step off, and a query whose signs follow the errors,
// so that they add up instead of cancelling (the real error is then close
// to the bound itself).
func TestBoundsWorstCase(t *testing.T) {
	const dim = 512
	s := New(dim)
	v := make([]float32, dim)
	q := make([]float32, dim)
	for i := range v {
		step := float32(1) / 127
		k := float32(i%100 - 50)
		v[i] = (k + 0.499) * step
		q[i] = 1 // every component rounds to k, so each is 0.499 steps over
	}
	v[0] = 1 // the peak: one step is 1/127
	s.Put(1, "a.md", v, true)
	for _, query := range [][]float32{q, negate(q)} {
		var dot, vn, qn float64
		for i := range v {
			dot += float64(v[i]) * float64(query[i])
			vn += float64(v[i]) * float64(v[i])
			qn += float64(query[i]) * float64(query[i])
		}
		exact := 1 - dot/math.Sqrt(vn*qn)
		b := s.Bounds(query, []string{"a.md"}, false)["a.md"]
		if !(b.Lo <= exact && exact <= b.Hi) {
			t.Fatalf("exact distance %v outside its bounds %+v", exact, b)
		}
		if mid := (b.Lo + b.Hi) / 2; math.Abs(mid-exact) < (b.Hi-b.Lo)/4 {
			t.Fatalf("exact %v, bounds %+v: the quantised distance should be off by most of the bound", exact, b)
		}
	}
}

// A row's dot product with a query split into two int8 vectors is within
// the remainder's bound of the exact one, for queries of every shape: the
// remainder is tiny for each, so the bounds stay as tight as the rows'
// own quantisation makes them.
func TestSplitQueryDot(t *testing.T) {
	const dim = 512
	rnd := rand.New(rand.NewPCG(22, 9))
	shapes := map[string]func(i int) float32{
		"normal": func(int) float32 { return float32(rnd.NormFloat64()) },
		"one spike": func(i int) float32 {
			if i == 7 {
				return 1000
			}
			return float32(rnd.NormFloat64()) * 1e-3
		},
		"tiny":     func(int) float32 { return float32(rnd.NormFloat64()) * 1e-30 },
		"mixed":    func(i int) float32 { return float32(rnd.NormFloat64() * math.Pow(10, float64(i%7-3))) },
		"integers": func(i int) float32 { return float32(i%255 - 127) },
	}
	row := make([]int8, dim)
	for name, shape := range shapes {
		vec := make([]float32, dim)
		for i := range vec {
			vec[i] = shape(i)
		}
		q := splitQuery(vec)
		if q.rest > q.norm/10_000 {
			t.Fatalf("%s: remainder %g of a query of norm %g", name, q.rest, q.norm)
		}
		for range 200 {
			var exact, rowNorm float64
			for i := range row {
				row[i] = int8(rnd.IntN(255) - 127)
				exact += float64(vec[i]) * float64(row[i])
				rowNorm += float64(row[i]) * float64(row[i])
			}
			d := make([]int32, 1)
			simd.Dots(q.hi, row, d)
			got := q.hiScale * float64(d[0])
			simd.Dots(q.lo, row, d)
			got += q.loScale * float64(d[0])
			if err := math.Abs(got - exact); err > q.rest*math.Sqrt(rowNorm)+1e-12*math.Abs(exact) {
				t.Fatalf("%s: dot %g, exact %g: off by %g, more than the remainder allows (%g)", name, got, exact, err, q.rest*math.Sqrt(rowNorm))
			}
		}
	}
}

func negate(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

// CosineDistance is within cosineSlack of the distance in float64, on
// vectors of every shape the bounds meet, and 0 from a vector to itself
// give or take the same.
func TestCosineDistanceWithinSlack(t *testing.T) {
	const dim = 512
	slack := cosineSlack(dim)
	for seed := range 200 {
		v, q := unit(seed, dim), unit(seed+1000, dim)
		if seed%3 == 0 {
			for i := range q {
				q[i] *= 1e3 // norms far from 1
			}
		}
		var dot, vn, qn float64
		for i := range v {
			dot += float64(v[i]) * float64(q[i])
			vn += float64(v[i]) * float64(v[i])
			qn += float64(q[i]) * float64(q[i])
		}
		exact := 1 - dot/math.Sqrt(vn*qn)
		if d := CosineDistance(v, q); math.Abs(d-exact) > slack {
			t.Fatalf("seed %d: %v, exactly %v: off by more than %g", seed, d, exact, slack)
		}
		if d := CosineDistance(v, v); math.Abs(d) > slack {
			t.Fatalf("seed %d: a vector's distance to itself %v", seed, d)
		}
	}
}

// CosineDistanceBytes is CosineDistance, bit for bit, on the bytes of v.
func TestCosineDistanceBytes(t *testing.T) {
	for seed := range 100 {
		v, q := unit(seed, 512), unit(seed+500, 512)
		for i := range v {
			v[i] *= float32(seed + 1)
		}
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		if got, want := CosineDistanceBytes(b, q), CosineDistance(v, q); got != want {
			t.Fatalf("seed %d: %v from bytes, %v from floats", seed, got, want)
		}
	}
}
