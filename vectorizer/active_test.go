package vectorizer

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

var (
	oldSpace = vault.EmbeddingSpace{Model: "test/fixed", Dim: 4}
	newSpace = vault.EmbeddingSpace{Model: "test/new", Dim: 4}
)

// reembedding is an index of three notes embedded in oldSpace, re-embedding
// into newSpace, and a note written since.
func reembedding(t *testing.T) *index.Store {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	open := func(space vault.EmbeddingSpace) *index.Store {
		s, err := index.Open(ctx, index.Options{Path: path, Space: space, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open(oldSpace)
	mustApply(t, s, notes(3)...)
	if _, err := New(s.Vectors(), &hostEmbedder{}, Options{Logger: quiet()}).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(newSpace)
	t.Cleanup(func() { s.Close() })
	mustApply(t, s, note("new.md", "## A\n\nwritten while re-embedding\n"))
	return s
}

// foundInOldSpace reports whether a vector search in oldSpace finds new.md.
func foundInOldSpace(t *testing.T, s *index.Store) bool {
	t.Helper()
	hits, err := s.Search().SearchVectorExact(context.Background(), vault.QueryVector{Space: oldSpace, Values: []float32{1, 1, 1, 0}}, 10, vault.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(hits, func(c vault.Chunk) bool { return c.Path == "new.md" })
}

// A note written while the index re-embeds is embedded with the model of
// the space searches use (Options.Active) too, before the re-embedding's
// next batch: vector search finds it before the switch, even while the
// new model fails, and the status counts it as embedded. Without that
// model it waits for the switch. A failing one is left alone, and the
// re-embedding goes on.
func TestDrainEmbedsNewNotesInTheActiveSpace(t *testing.T) {
	ctx := context.Background()
	down := &hostEmbedder{}
	down.down.Store(true)

	s := reembedding(t)
	v := New(s.Vectors(), down, Options{Active: &hostEmbedder{}, Logger: quiet()})
	n, err := v.Drain(ctx)
	if err == nil || n != 1 || !foundInOldSpace(t, s) {
		t.Fatalf("with the old model, the new one down: drained %d, %v; found in the old space: %v", n, err, foundInOldSpace(t, s))
	}
	if st := v.Status(); st.Embedded != 1 || st.OpenEmbedded != 1 {
		t.Fatalf("with the old model: status counts %d embedded, %d open, want the open note's chunk in both", st.Embedded, st.OpenEmbedded)
	}
	if got := s.Search().ActiveSpace(); got != oldSpace {
		t.Fatalf("searches use %v, want the old space until the re-embedding is done", got)
	}

	s = reembedding(t)
	if _, err := New(s.Vectors(), down, Options{Logger: quiet()}).Drain(ctx); err == nil || foundInOldSpace(t, s) {
		t.Fatalf("without the old model: %v; found in the old space: %v", err, foundInOldSpace(t, s))
	}

	s = reembedding(t)
	v = New(s.Vectors(), &hostEmbedder{}, Options{Active: down, Logger: quiet()})
	if !v.Status().Active {
		t.Fatal("Status().Active unset with an old model")
	}
	n, err = v.Drain(ctx)
	if err != nil || n != mustStats(t, s).Chunks || s.Search().ActiveSpace() != newSpace || v.Status().Active {
		t.Fatalf("with a failing old model: drained %d of %d chunks, %v; searches use %v; status %+v", n, mustStats(t, s).Chunks, err, s.Search().ActiveSpace(), v.Status())
	}
}
