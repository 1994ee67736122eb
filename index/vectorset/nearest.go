package vectorset

import "github.com/vaultask/vaultask/internal/simd"

// candidate is a slot's rank in a scan: the higher, the nearer.
type candidate struct {
	score float32
	id    int64
}

// Nearest returns the chunk ids of up to n vectors nearest to vec by the
// quantised cosine similarity, nearest first; with openOnly, of open
// chunks only, so the filter applies before n is taken.
func (s *Set) Nearest(vec []float32, n int, openOnly bool) []int64 {
	q := make([]int8, s.dim)
	simd.Quantize(q, vec)
	dots := make([]int32, blockRows)
	// best is a min-heap of the n best so far: best[0] is the one to beat.
	best := make([]candidate, 0, n)
	s.mu.RLock()
	for b, block := range s.blocks {
		first := b * blockRows
		rows := min(blockRows, len(s.ids)-first)
		simd.Dots(q, block[:rows*s.dim], dots[:rows])
		for i, d := range dots[:rows] {
			slot := first + i
			if openOnly && !s.open[slot] {
				continue
			}
			c := candidate{score: float32(d) * s.weight[slot], id: s.ids[slot]}
			switch {
			case len(best) < n:
				best = append(best, c)
				siftUp(best, len(best)-1)
			case c.score > best[0].score:
				best[0] = c
				siftDown(best, 0)
			}
		}
	}
	s.mu.RUnlock()
	out := make([]int64, len(best))
	for i := len(best) - 1; i >= 0; i-- {
		out[i] = best[0].id
		best[0] = best[i]
		best = best[:i]
		siftDown(best, 0)
	}
	return out
}

func siftUp(h []candidate, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].score <= h[i].score {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []candidate, i int) {
	for {
		m := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h) && h[c].score < h[m].score {
				m = c
			}
		}
		if m == i {
			return
		}
		h[m], h[i] = h[i], h[m]
		i = m
	}
}
