package index

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// newSpace is another model than testSpace, with prefixes and another
// dimension: what a change of models.embedding asks for.
var newSpace = vault.EmbeddingSpace{Model: "test/new", Dim: 3, QueryPrefix: "query: ", DocumentPrefix: "passage: "}

func vecOld(string) []float32 { return []float32{1, 0, 0, 0} }
func vecNew(string) []float32 { return []float32{0, 1, 0} }

func mustStats(t *testing.T, s *Store) Stats {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// searchIn searches s with a query vector of space, by the vector set as
// serve does, and returns the hits' note paths.
func searchIn(t *testing.T, s *Store, space vault.EmbeddingSpace, vec []float32) ([]string, error) {
	t.Helper()
	hits, err := s.Search().SearchVectorExact(context.Background(), vault.QueryVector{Space: space, Values: vec}, 10, vault.ScopeAll)
	var paths []string
	for _, h := range hits {
		paths = append(paths, h.Path)
	}
	return paths, err
}

// embedOne embeds one batch of the backlog, of at most n chunks.
func embedOne(t *testing.T, s *Store, n int, vecFor func(string) []float32) int {
	t.Helper()
	pending, err := s.Vectors().Backlog(context.Background(), n, n)
	if err != nil {
		t.Fatal(err)
	}
	vs := make([]Vector, len(pending))
	for i, p := range pending {
		vs[i] = Vector{RowID: p.RowID, Text: p.Text, Embedding: vecFor(p.Text)}
	}
	if _, err := s.Vectors().PutVectors(context.Background(), vs); err != nil {
		t.Fatal(err)
	}
	return len(pending)
}

// TestReembedsIntoANewSpace follows an index through a change of embedding
// model: it opens (no error, nothing to rebuild), searches go on in the old
// space while the new one fills, an interruption resumes where it was, a
// note written meanwhile waits for its vector in the new space only, and
// once every chunk has one the new space takes the old one's place at once.
func TestReembedsIntoANewSpace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(note("a.md", "alpha"), note("b.md", "beta"), note("c.md", "gamma")))
	embedAll(t, s, vecOld)
	s.Close()

	s = mustOpen(t, Options{Path: path, Space: newSpace})
	if got := s.Search().ActiveSpace(); got != testSpace {
		t.Fatalf("while re-embedding, searches use %v, want the old %v", got, testSpace)
	}
	st := mustStats(t, s)
	if st.Reembedding == nil || st.Reembedding.Total != 3 || st.Reembedding.Embedded != 0 || st.Vectors != 3 || st.EmbeddingModel != testSpace.Model {
		t.Fatalf("stats as re-embedding starts: %+v, %+v", st, st.Reembedding)
	}
	if hits, err := searchIn(t, s, testSpace, vecOld("")); err != nil || len(hits) != 3 {
		t.Fatalf("search in the old space while re-embedding: %v, %v", hits, err)
	}
	if _, err := searchIn(t, s, newSpace, vecNew("")); !errors.Is(err, vault.ErrOtherSpace) {
		t.Fatalf("search in the space being filled: %v, want vault.ErrOtherSpace", err)
	}

	if n := embedOne(t, s, 1, vecNew); n != 1 {
		t.Fatalf("embedded %d", n)
	}
	if ok, err := s.Vectors().PromoteFilled(ctx); err != nil || ok {
		t.Fatalf("PromoteFilled with chunks still waiting: %v, %v", ok, err)
	}
	// Interrupted: the next start resumes with what it had.
	s.Close()
	s = mustOpen(t, Options{Path: path, Space: newSpace})
	if st := mustStats(t, s); st.Reembedding == nil || st.Reembedding.Embedded != 1 {
		t.Fatalf("after a restart: %+v", st.Reembedding)
	}
	// A note written meanwhile gets its vector in the new space alone.
	mustApply(t, s, upserts(note("d.md", "delta")))
	if hits, _ := searchIn(t, s, testSpace, vecOld("")); len(hits) != 3 {
		t.Errorf("the old space holds a vector of the note written while re-embedding: %v", hits)
	}

	embedAll(t, s, vecNew)
	ok, err := s.Vectors().PromoteFilled(ctx)
	if err != nil || !ok {
		t.Fatalf("PromoteFilled with every chunk embedded: %v, %v", ok, err)
	}
	if got := s.Search().ActiveSpace(); got != newSpace {
		t.Fatalf("after the switch searches use %v, want %v", got, newSpace)
	}
	if hits, err := searchIn(t, s, newSpace, vecNew("")); err != nil || len(hits) != 4 {
		t.Fatalf("search in the new space: %v, %v", hits, err)
	}
	if _, err := searchIn(t, s, testSpace, vecOld("")); !errors.Is(err, vault.ErrOtherSpace) {
		t.Fatalf("search in the old space after the switch: %v, want vault.ErrOtherSpace", err)
	}
	if n := count(t, s, `SELECT count(*) FROM vectors v JOIN spaces sp ON sp.id = v.space WHERE sp.model = ?`, testSpace.Model); n != 0 {
		t.Errorf("%d vectors of the old space are left", n)
	}
	st = mustStats(t, s)
	if st.Reembedding != nil || st.Vectors != 4 || st.EmbeddingModel != newSpace.Model || st.EmbeddingDim != newSpace.Dim {
		t.Fatalf("stats after the switch: %+v", st)
	}
	// The vector set the switch read serves the search now.
	mustShortlist(t, s)
	if hits, err := s.Search().SearchVector(ctx, vault.QueryVector{Space: newSpace, Values: vecNew("")}, 10, vault.ScopeAll); err != nil || len(hits) != 4 {
		t.Fatalf("SearchVector by the set after the switch: %d hits, %v", len(hits), err)
	}
	s.Close()
	s = mustOpen(t, Options{Path: path, Space: newSpace})
	if st := mustStats(t, s); st.Reembedding != nil || st.EmbeddingBacklog != 0 {
		t.Fatalf("reopened after the switch: %+v", st)
	}
}

// TestBackToTheActiveSpace: a model changed back before the new space was
// full drops the half-filled space; what was written meanwhile waits for
// its vector in the active space, the rest keeps it.
func TestBackToTheActiveSpace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(note("a.md", "alpha"), note("b.md", "beta")))
	embedAll(t, s, vecOld)
	s.Close()

	s = mustOpen(t, Options{Path: path, Space: newSpace})
	embedOne(t, s, 1, vecNew)
	mustApply(t, s, upserts(note("c.md", "gamma")))
	s.Close()

	s = mustOpen(t, Options{Path: path})
	st := mustStats(t, s)
	if st.Reembedding != nil || st.EmbeddingBacklog != 1 || st.Vectors != 2 {
		t.Fatalf("back to the active space: %+v", st)
	}
	if n := count(t, s, `SELECT count(*) FROM vectors v JOIN spaces sp ON sp.id = v.space WHERE sp.model = ?`, newSpace.Model); n != 0 {
		t.Errorf("%d vectors of the dropped space are left", n)
	}
	pending, err := s.Vectors().Backlog(context.Background(), 10, 10)
	if err != nil || len(pending) != 1 || pending[0].DocID != "c.md" {
		t.Fatalf("backlog: %+v, %v", pending, err)
	}
}

// TestPrefixesArePartOfTheSpace: the same model with other prefixes places
// texts elsewhere, so a change of prefix re-embeds like a change of model.
func TestPrefixesArePartOfTheSpace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(note("a.md", "alpha")))
	embedAll(t, s, vecOld)
	s.Close()

	prefixed := testSpace
	prefixed.QueryPrefix = "query: "
	s = mustOpen(t, Options{Path: path, Space: prefixed})
	if st := mustStats(t, s); st.Reembedding == nil || st.EmbeddingBacklog != 1 {
		t.Fatalf("a new query prefix: %+v", st)
	}
}

// TestPromoteAnEmptyFill: a switch to a new space of an index with no
// chunk at all has nothing to wait for.
func TestPromoteAnEmptyFill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	mustOpen(t, Options{Path: path}).Close()
	s := mustOpen(t, Options{Path: path, Space: newSpace})
	if ok, err := s.Vectors().PromoteFilled(context.Background()); err != nil || !ok || s.Search().ActiveSpace() != newSpace {
		t.Fatalf("PromoteFilled on an empty index: %v, %v, active %v", ok, err, s.Search().ActiveSpace())
	}
}

// A reader that names another model and other personal paths reclassifies
// the index through a writer of its own, and that writer keeps the space the
// index embeds into: a read-only command (stats, ask, eval) with another
// config neither starts a re-embedding nor undoes one under way.
func TestReaderReclassifyingKeepsTheSpace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(note("p/a.md", "alpha"), note("b.md", "beta")))
	embedAll(t, s, vecOld)
	s.Close()

	other := Classifier{PersonalPaths: []string{"p/**"}}
	r := mustOpen(t, Options{Path: path, Space: newSpace, Sensitivity: other, ReadOnly: true})
	if st := mustStats(t, r); st.PersonalNotes != 1 || st.Reembedding != nil || st.EmbeddingBacklog != 0 || st.EmbeddingModel != testSpace.Model {
		t.Fatalf("a reader of another model, after reclassifying: %d personal notes, reembedding %+v, backlog %d, model %s; want 1, none, 0, %s",
			st.PersonalNotes, st.Reembedding, st.EmbeddingBacklog, st.EmbeddingModel, testSpace.Model)
	}
	r.Close()

	// While the index re-embeds into newSpace, a reader naming the old model
	// (and other paths again) leaves the re-embedding as it was.
	s = mustOpen(t, Options{Path: path, Space: newSpace, Sensitivity: other})
	embedOne(t, s, 1, vecNew)
	s.Close()
	r = mustOpen(t, Options{Path: path, Space: testSpace, ReadOnly: true})
	if st := mustStats(t, r); st.PersonalNotes != 0 || st.Reembedding == nil || st.Reembedding.Embedded != 1 {
		t.Fatalf("a reader of the old model while re-embedding: %d personal notes, reembedding %+v; want 0 and 1 chunk of the new space kept", st.PersonalNotes, st.Reembedding)
	}
}

// TestSpaceFiles: a built-in model's files are part of its space. The same
// model with other files (its weights replaced under its name) embeds
// every chunk again, from nothing, rather than mixing its vectors with the
// old files'; an index recorded before spaces had files keeps its vectors
// and records the configured files.
func TestSpaceFiles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	builtin := vault.EmbeddingSpace{Model: "builtin/test", Dim: 4, QueryPrefix: "q: ", Files: "sha256:aaaa"}
	s := mustOpen(t, Options{Path: path, Space: builtin})
	mustApply(t, s, upserts(note("a.md", "alpha"), note("b.md", "beta")))
	embedAll(t, s, vecOld)
	s.Close()

	s = mustOpen(t, Options{Path: path, Space: builtin})
	if st := mustStats(t, s); st.EmbeddingBacklog != 0 || st.Vectors != 2 || s.Search().ActiveSpace() != builtin {
		t.Fatalf("reopened with the same files: %+v, space %v", st, s.Search().ActiveSpace())
	}
	s.Close()

	other := builtin
	other.Files = "sha256:bbbb"
	s = mustOpen(t, Options{Path: path, Space: other})
	st := mustStats(t, s)
	if st.EmbeddingBacklog != 2 || st.Vectors != 0 || st.Reembedding != nil || s.Search().ActiveSpace() != other {
		t.Fatalf("reopened with other files: %+v (re-embedding %+v), space %v; want every chunk to embed again in the new space", st, st.Reembedding, s.Search().ActiveSpace())
	}
	if _, err := searchIn(t, s, builtin, vecOld("")); !errors.Is(err, vault.ErrOtherSpace) {
		t.Errorf("a question embedded with the old files: %v, want vault.ErrOtherSpace", err)
	}
	embedAll(t, s, vecOld)
	if hits, err := searchIn(t, s, other, vecOld("")); err != nil || len(hits) != 2 {
		t.Errorf("search with the new files: %v, %v", hits, err)
	}

	// As migration 0016 leaves a space recorded before.
	if _, err := s.db().ExecContext(ctx, `UPDATE spaces SET files = ''`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = mustOpen(t, Options{Path: path, Space: other})
	if st := mustStats(t, s); st.EmbeddingBacklog != 0 || st.Vectors != 2 || s.Search().ActiveSpace() != other {
		t.Fatalf("an index recorded before spaces had files: %+v, space %v; want its vectors kept and the files recorded", st, s.Search().ActiveSpace())
	}
	s.Close()
	r := mustOpen(t, Options{Path: path, Space: other, ReadOnly: true})
	if r.Search().ActiveSpace() != other {
		t.Errorf("a reader sees %v, want %v", r.Search().ActiveSpace(), other)
	}
}
