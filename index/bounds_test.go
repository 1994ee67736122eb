package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/internal/simd"
	"github.com/vaultask/vaultask/vault"
)

// boundsStore is a store of 80 notes of one to three chunks with clustered
// 512-dimension vectors (near one another, as a real model's are, so the
// bounds must be tight to tell them apart), every fifth note personal, one
// personal chunk in an open note, and one note written after the
// embedding, without vectors.
func boundsStore(t *testing.T) (*Store, []string) {
	t.Helper()
	s := mustOpen(t, Options{Space: space512, Sensitivity: Classifier{PersonalPaths: []string{"p/**"}}})
	var ns []vault.NoteInput
	var ids []string
	k := 0
	for i := range 80 {
		var b strings.Builder
		for j := range 1 + i%3 {
			fmt.Fprintf(&b, "## Part %d\n\n%s note %d\n\n", j, strings.Repeat("words here. ", 120), k)
			k++
		}
		ns = append(ns, note(notePath(i), b.String()))
		ids = append(ids, strings.ToLower(notePath(i)))
	}
	mustApply(t, s, upserts(ns...))
	embedAll(t, s, func(text string) []float32 { return clustered(numberAtEnd(strings.TrimSpace(text))) })
	mustApply(t, s, upserts(note("open/pending.md", "## Part 0\n\nnot embedded yet\n")))
	ids = append(ids, "open/pending.md", "gone.md")
	if chunks := count(t, s, `SELECT count(*) FROM chunks`); chunks != k+1 {
		t.Fatalf("%d chunks, want %d", chunks, k+1)
	}
	// In both tables, as a reclassification writes it.
	for _, table := range []string{"chunks", "chunks_vec"} {
		if _, err := s.writer.Exec(`UPDATE ` + table + ` SET sensitivity = 'personal'
			WHERE rowid = (SELECT rowid FROM chunks WHERE doc_id = 'open/n0002.md' AND ordinal = 2)`); err != nil {
			t.Fatal(err)
		}
	}
	return s, ids
}

// DistanceBounds holds each note's exact distance, as NearestChunks reads
// it, between its bounds, under every scope, for queries near the vectors
// and far from them; the bounds are tight enough to rule notes out; a
// personal chunk never moves an open note's bounds.
func TestDistanceBounds(t *testing.T) {
	s, ids := boundsStore(t)
	ctx := context.Background()
	mustShortlist(t, s)
	var width float64
	widths := 0
	for i := range 30 {
		vec := clustered(500 + i)
		if i%3 == 0 {
			vec = unitVector(2000 + i) // far from every cluster
		}
		for _, scope := range []vault.Scope{vault.ScopeAll, vault.ScopeOpen, vault.Scope(7)} {
			nearest, dist, err := s.NearestChunks(ctx, ids, vec, scope)
			if err != nil {
				t.Fatal(err)
			}
			bounds, err := s.DistanceBounds(ctx, ids, vec, scope)
			if err != nil {
				t.Fatal(err)
			}
			mustBound(t, fmt.Sprintf("query %d under %s", i, scope), bounds, vec, nearest, dist)
			for id, b := range bounds {
				if scope.OpenOnly() && (strings.HasPrefix(id, "p/")) {
					t.Fatalf("under %s a personal note is bounded: %s", scope, id)
				}
				if !math.IsInf(b.Hi, 1) {
					width += b.Hi - b.Lo
					widths++
				}
			}
		}
	}
	if width /= float64(widths); width > 0.02 {
		t.Fatalf("bounds %.4f wide on average: too loose to rule a note out", width)
	}
	t.Logf("bounds %.4f wide on average over %d notes", width, widths)

	// A query at the personal chunk of open/n0002.md: under ScopeAll the
	// note is at distance 0, under ScopeOpen at its nearest open chunk.
	var personal []byte
	if err := s.reader.QueryRow(`SELECT v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.rowid
		WHERE c.doc_id = 'open/n0002.md' AND c.ordinal = 2`).Scan(&personal); err != nil {
		t.Fatal(err)
	}
	vec := make([]float32, space512.Dim)
	if err := decodeVector(vec, personal); err != nil {
		t.Fatal(err)
	}
	all, err := s.DistanceBounds(ctx, []string{"open/n0002.md"}, vec, vault.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	open, err := s.DistanceBounds(ctx, []string{"open/n0002.md"}, vec, vault.ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	nearest, dist, err := s.NearestChunks(ctx, []string{"open/n0002.md"}, vec, vault.ScopeOpen)
	if err != nil || len(nearest) != 1 {
		t.Fatalf("NearestChunks = %v, %v", nearest, err)
	}
	if d := dist[nearest[0].RowID]; all["open/n0002.md"].Lo > 1e-3 || !(open["open/n0002.md"].Lo > d-0.02) || d < 1e-3 {
		t.Fatalf("toward the personal chunk: ScopeAll %+v, ScopeOpen %+v, the nearest open chunk at %v", all, open, d)
	}
}

// A note is left out when the shortlist holds none of its vectors (it is a
// commit behind the reader) or is not read yet; nothing is bounded without
// a usable query vector.
func TestDistanceBoundsLeaveOut(t *testing.T) {
	s, ids := boundsStore(t)
	ctx := context.Background()
	vec := clustered(7)
	if b, err := s.DistanceBounds(ctx, ids, vec, vault.ScopeAll); err != nil || b != nil {
		t.Fatalf("before the shortlist is read: %v, %v; want nothing bounded", b, err)
	}
	awaitShortlist(t, s)
	lagging, err := queryAll(ctx, s.reader, one[int64], `SELECT rowid FROM chunks WHERE doc_id = 'open/n0004.md'`)
	if err != nil || len(lagging) != 2 {
		t.Fatalf("the chunks of open/n0004.md: %v, %v", lagging, err)
	}
	sl := s.short.Load()
	sl.mu.Lock()
	for _, id := range lagging {
		sl.drop(id)
	}
	sl.mu.Unlock()
	b, err := s.DistanceBounds(ctx, ids, vec, vault.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b["open/n0004.md"]; ok || len(b) != 79 {
		t.Fatalf("%d notes bounded, open/n0004.md %v; want the 79 others with vectors", len(b), b["open/n0004.md"])
	}
	nan := clustered(7)
	nan[3] = float32(math.NaN())
	for name, v := range map[string][]float32{"nil": nil, "zero": make([]float32, space512.Dim), "NaN": nan} {
		if b, err := s.DistanceBounds(ctx, ids, v, vault.ScopeAll); err != nil || b != nil {
			t.Fatalf("a %s query: %v, %v; want nothing bounded", name, b, err)
		}
	}
	if _, err := s.DistanceBounds(ctx, ids, []float32{1, 0}, vault.ScopeAll); err == nil {
		t.Fatal("a query of the wrong dimension: no error")
	}
}

// The bounds hold for the worst a quantised vector can be: every component
// just under half a step off, and a query whose signs follow the errors,
// so that they add up instead of cancelling (the real error is then close
// to the bound itself).
func TestBoundsWorstCase(t *testing.T) {
	const dim = 512
	sl := newShortlist(dim)
	v := make([]float32, dim)
	q := make([]float32, dim)
	for i := range v {
		step := float32(1) / 127
		k := float32(i%100 - 50)
		v[i] = (k + 0.499) * step
		q[i] = 1 // every component rounds to k, so each is 0.499 steps over
	}
	v[0] = 1 // the peak: one step is 1/127
	sl.put(1, "a.md", v, true)
	for _, query := range [][]float32{q, negate(q)} {
		var dot, vn, qn float64
		for i := range v {
			dot += float64(v[i]) * float64(query[i])
			vn += float64(v[i]) * float64(v[i])
			qn += float64(query[i]) * float64(query[i])
		}
		exact := 1 - dot/math.Sqrt(vn*qn)
		b := sl.bounds(query, []string{"a.md"}, false)["a.md"]
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
