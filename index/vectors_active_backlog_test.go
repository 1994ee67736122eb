package index

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// activeVectors gives pending its vectors of the old space.
func activeVectors(pending []Pending) []Vector {
	vs := make([]Vector, len(pending))
	for i, p := range pending {
		vs[i] = Vector{RowID: p.RowID, Text: p.Text, Embedding: vecOld(p.Text)}
	}
	return vs
}

// notesOf is the notes pending's chunks belong to, in order.
func notesOf(pending []Pending) []string {
	var out []string
	for _, p := range pending {
		if !slices.Contains(out, p.DocID) {
			out = append(out, p.DocID)
		}
	}
	return out
}

// twoChunks is a note the chunker splits in two.
func twoChunks(path string) string {
	para := strings.Repeat("A long paragraph about sourdough, starters and the patience they ask for. ", 40)
	return "# " + path + "\n\n## First\n\n" + para + "\n\n## Second\n\n" + para + "\n"
}

// Notes written while the index re-embeds get their vectors in the space
// searches use too: whole notes, oldest first, searchable at once; a
// partial note, a changed text, or a switch made meanwhile store nothing.
func TestActiveBacklog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(note("a.md", "alpha"), note("b.md", "beta"), note("c.md", "gamma")))
	embedAll(t, s, vecOld)
	if _, pending, err := s.Vectors().ActiveBacklog(ctx, 64); err != nil || len(pending) != 0 {
		t.Fatalf("ActiveBacklog while no space is being filled: %v, %v", pending, err)
	}
	s.Close()

	s = mustOpen(t, Options{Path: path, Space: newSpace})
	if _, pending, err := s.Vectors().ActiveBacklog(ctx, 64); err != nil || len(pending) != 0 {
		t.Fatalf("ActiveBacklog with nothing written since the re-embedding began: %v, %v", pending, err)
	}
	mustApply(t, s, upserts(note("d.md", "delta")))
	mustApply(t, s, upserts(note("e.md", twoChunks("e"))))
	mustApply(t, s, upserts(note("f.md", "phi")))

	// One chunk asked for: the oldest note; then the two-chunk note whole.
	space, pending, err := s.Vectors().ActiveBacklog(ctx, 1)
	if err != nil || space != testSpace || !slices.Equal(notesOf(pending), []string{"d.md"}) {
		t.Fatalf("ActiveBacklog(1) = %v %v, %v; want d.md in %v", space, notesOf(pending), err, testSpace)
	}
	if n, err := s.Vectors().PutActiveVectors(ctx, space, activeVectors(pending)); err != nil || n != 1 {
		t.Fatalf("PutActiveVectors(d.md) = %d, %v", n, err)
	}
	_, pending, err = s.Vectors().ActiveBacklog(ctx, 1)
	if err != nil || len(pending) != 2 || !slices.Equal(notesOf(pending), []string{"e.md"}) {
		t.Fatalf("ActiveBacklog(1) after d.md = %d chunks of %v, %v; want e.md's two", len(pending), notesOf(pending), err)
	}
	if n, err := s.Vectors().PutActiveVectors(ctx, space, activeVectors(pending[:1])); err != nil || n != 0 {
		t.Fatalf("PutActiveVectors with half of e.md = %d, %v; want nothing stored", n, err)
	}
	if hits, err := searchIn(t, s, testSpace, vecOld("")); err != nil || len(hits) != 4 {
		t.Fatalf("search in the old space: %v, %v; want a, b, c and d", hits, err)
	}

	_, pending, err = s.Vectors().ActiveBacklog(ctx, 64)
	if err != nil || !slices.Equal(notesOf(pending), []string{"e.md", "f.md"}) {
		t.Fatalf("ActiveBacklog(64) = %v, %v; want e.md and f.md", notesOf(pending), err)
	}
	// f.md is rewritten after its backlog was read: its vector is stale.
	mustApply(t, s, upserts(note("f.md", "phi, again")))
	if n, err := s.Vectors().PutActiveVectors(ctx, space, activeVectors(pending)); err != nil || n != 2 {
		t.Fatalf("PutActiveVectors(e.md, stale f.md) = %d, %v; want e.md's 2", n, err)
	}
	_, pending, err = s.Vectors().ActiveBacklog(ctx, 64)
	if err != nil || !slices.Equal(notesOf(pending), []string{"f.md"}) {
		t.Fatalf("ActiveBacklog after the rewrite = %v, %v; want f.md again", notesOf(pending), err)
	}
	if n, err := s.Vectors().PutActiveVectors(ctx, space, activeVectors(pending)); err != nil || n != 1 {
		t.Fatalf("PutActiveVectors(f.md) = %d, %v", n, err)
	}
	if hits, err := searchIn(t, s, testSpace, vecOld("")); err != nil || len(hits) != 7 {
		t.Fatalf("search in the old space: %v, %v; want every chunk", hits, err)
	}
	if _, pending, err := s.Vectors().ActiveBacklog(ctx, 64); err != nil || len(pending) != 0 {
		t.Fatalf("ActiveBacklog once caught up: %v, %v", notesOf(pending), err)
	}
	if n := embedAll(t, s, vecNew); n != count(t, s, `SELECT count(*) FROM chunks`) {
		t.Fatalf("the new space's backlog is %d chunks, want every chunk", n)
	}

	// The switch: the old space is gone, and so is its backlog.
	mustApply(t, s, upserts(note("g.md", "gimel")))
	_, pending, err = s.Vectors().ActiveBacklog(ctx, 64)
	if err != nil || len(pending) != 1 {
		t.Fatalf("ActiveBacklog(g.md) = %v, %v", notesOf(pending), err)
	}
	embedAll(t, s, vecNew)
	if ok, err := s.Vectors().PromoteFilled(ctx); err != nil || !ok {
		t.Fatalf("PromoteFilled: %v, %v", ok, err)
	}
	if n, err := s.Vectors().PutActiveVectors(ctx, space, activeVectors(pending)); err != nil || n != 0 {
		t.Fatalf("PutActiveVectors after the switch = %d, %v; want nothing stored", n, err)
	}
	if _, pending, err := s.Vectors().ActiveBacklog(ctx, 64); err != nil || len(pending) != 0 {
		t.Fatalf("ActiveBacklog after the switch: %v, %v", notesOf(pending), err)
	}
}

// An index whose active space holds no vector (built without an embedder)
// has nothing to catch up with there: only the new space is filled.
func TestActiveBacklogOfAnEmptySpace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(note("a.md", "alpha")))
	s.Close()
	s = mustOpen(t, Options{Path: path, Space: newSpace})
	mustApply(t, s, upserts(note("b.md", "beta")))
	if _, pending, err := s.Vectors().ActiveBacklog(context.Background(), 64); err != nil || len(pending) != 0 {
		t.Fatalf("ActiveBacklog of a space without vectors: %v, %v", notesOf(pending), err)
	}
}
