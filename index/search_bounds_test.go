package index

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/index/vectorset"
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
	for _, table := range []string{"chunks"} {
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
			nearest, dist, err := s.Search().NearestChunks(ctx, ids, s.queryOf(vec), scope)
			if err != nil {
				t.Fatal(err)
			}
			bounds, err := s.Search().DistanceBounds(ctx, ids, s.queryOf(vec), scope)
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
	if err := s.reader.QueryRow(`SELECT v.embedding FROM chunks c JOIN vectors v ON v.chunk = c.rowid
		WHERE c.doc_id = 'open/n0002.md' AND c.ordinal = 2`).Scan(&personal); err != nil {
		t.Fatal(err)
	}
	vec := make([]float32, space512.Dim)
	if err := decodeVector(vec, personal); err != nil {
		t.Fatal(err)
	}
	all, err := s.Search().DistanceBounds(ctx, []string{"open/n0002.md"}, s.queryOf(vec), vault.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	open, err := s.Search().DistanceBounds(ctx, []string{"open/n0002.md"}, s.queryOf(vec), vault.ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	nearest, dist, err := s.Search().NearestChunks(ctx, []string{"open/n0002.md"}, s.queryOf(vec), vault.ScopeOpen)
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
	if b, err := s.Search().DistanceBounds(ctx, ids, s.queryOf(vec), vault.ScopeAll); err != nil || b != nil {
		t.Fatalf("before the shortlist is read: %v, %v; want nothing bounded", b, err)
	}
	awaitShortlist(t, s)
	lagging, err := queryAll(ctx, s.reader, one[int64], `SELECT rowid FROM chunks WHERE doc_id = 'open/n0004.md'`)
	if err != nil || len(lagging) != 2 {
		t.Fatalf("the chunks of open/n0004.md: %v, %v", lagging, err)
	}
	for _, id := range lagging {
		loadedSet(t, s).set.Apply([]vectorset.Change{{ID: id, Dropped: true}})
	}
	b, err := s.Search().DistanceBounds(ctx, ids, s.queryOf(vec), vault.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b["open/n0004.md"]; ok || len(b) != 79 {
		t.Fatalf("%d notes bounded, open/n0004.md %v; want the 79 others with vectors", len(b), b["open/n0004.md"])
	}
	nan := clustered(7)
	nan[3] = float32(math.NaN())
	for name, v := range map[string][]float32{"nil": nil, "zero": make([]float32, space512.Dim), "NaN": nan} {
		if b, err := s.Search().DistanceBounds(ctx, ids, s.queryOf(v), vault.ScopeAll); err != nil || b != nil {
			t.Fatalf("a %s query: %v, %v; want nothing bounded", name, b, err)
		}
	}
	if _, err := s.Search().DistanceBounds(ctx, ids, s.queryOf([]float32{1, 0}), vault.ScopeAll); err == nil {
		t.Fatal("a query of the wrong dimension: no error")
	}
}
