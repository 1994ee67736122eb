package vectorset

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
)

// Nearest ranks like the exact cosine distance, give or take the
// quantisation: its top 20 of 40 candidates hold the exact top 10 on
// random vectors, and with openOnly it returns no personal chunk, however
// many personal ones are nearer.
func TestNearest(t *testing.T) {
	const dim, n = 128, 3000
	s := New(dim)
	vecs := map[int64][]float32{}
	for i := range n {
		v := unit(i, dim)
		vecs[int64(i)] = v
		s.Put(int64(i), fmt.Sprintf("n%d.md", i), v, i%4 != 0)
	}
	for qi := range 20 {
		q := unit(100000+qi, dim)
		for _, openOnly := range []bool{false, true} {
			type hit struct {
				id int64
				d  float64
			}
			var exact []hit
			for id, v := range vecs {
				if !openOnly || id%4 != 0 {
					exact = append(exact, hit{id, CosineDistance(v, q)})
				}
			}
			slices.SortFunc(exact, func(a, b hit) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
			got := s.Nearest(q, 20, openOnly)
			if len(got) != 20 {
				t.Fatalf("%d candidates, want 20", len(got))
			}
			for _, id := range got {
				if openOnly && id%4 == 0 {
					t.Fatalf("openOnly returned personal chunk %d", id)
				}
			}
			for _, h := range exact[:10] {
				if !slices.Contains(got, h.id) {
					t.Fatalf("query %d openOnly=%v: exact hit %d (distance %.4f) not among the candidates", qi, openOnly, h.id, h.d)
				}
			}
		}
	}
	if got := New(dim).Nearest(unit(1, dim), 5, false); len(got) != 0 {
		t.Fatalf("an empty set offers %v", got)
	}
}
