package rag

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// newModelSpace is the configured model's space while the index still
// searches testSpace, the one it was built in.
var newModelSpace = vault.EmbeddingSpace{Model: "test/new-model", Dim: testDim, QueryPrefix: "query: ", DocumentPrefix: "passage: "}

// reembeddingIndex is an index built in testSpace and reopened with the
// configured model's space: it re-embeds (nothing of the new space yet) and
// searches testSpace meanwhile.
func reembeddingIndex(t *testing.T) *index.Store {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	opts := index.Options{Path: path, Space: testSpace, Logger: quietLog()}
	s, err := index.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Feed().Apply(ctx, index.Batch{Upserts: []vault.NoteInput{
		note("Garden/Tomatoes.md", "# Tomatoes\n\nWater tomatoes at the root every morning.\n"),
		note("Garden/Roses.md", "# Roses\n\nPrune roses in late winter.\n"),
	}}); err != nil {
		t.Fatal(err)
	}
	embedAll(t, s)
	s.Close()
	opts.Space = newModelSpace
	if s, err = index.Open(ctx, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if s.Search().ActiveSpace() != testSpace {
		t.Fatalf("the index searches %v, want the space it was built in", s.Search().ActiveSpace())
	}
	return s
}

// TestReembeddingIndexUsesTheOldModel: while the index re-embeds, a
// question is embedded by the model of the space the index searches when
// it is at hand, and answered by full text alone, without an error, when
// only the new model is.
func TestReembeddingIndexUsesTheOldModel(t *testing.T) {
	s := reembeddingIndex(t)
	bag := &bagEmbedder{}
	q := Question{Text: "how often do I water the tomatoes", AllowWeb: false}

	both := Embedders{{Texts: bag, Space: newModelSpace}, {Texts: bag, Space: testSpace}}
	r := mustRetrieve(t, mustPipeline(t, Options{Searcher: s.Search(), Embedder: both}), q)
	if r.FullTextOnly || len(r.Vector) == 0 {
		t.Fatalf("with the old model at hand: full text only %v, %d vector hits", r.FullTextOnly, len(r.Vector))
	}

	newOnly := Embedders{{Texts: bag, Space: newModelSpace}}
	r = mustRetrieve(t, mustPipeline(t, Options{Searcher: s.Search(), Embedder: newOnly}), q)
	if !r.FullTextOnly || len(r.Vector) != 0 {
		t.Fatalf("with only the new model: full text only %v, %d vector hits", r.FullTextOnly, len(r.Vector))
	}
	if !slices.Contains(hitPaths(r.Direct), "Garden/Tomatoes.md") {
		t.Errorf("full text did not answer: %v", hitPaths(r.Direct))
	}
	if !traceSays(r, "vector", "no embedding model of the space the index searches") {
		t.Errorf("the trace does not say why the vector search was left out: %+v", r.Trace.Stages)
	}
}

// switchingSearcher is a real index that switches to another space between
// a question's embedding and its searches: every vector read answers
// vault.ErrOtherSpace, as the index does then.
type switchingSearcher struct{ *index.Search }

func (s switchingSearcher) SearchVector(context.Context, vault.QueryVector, int, vault.Scope) ([]vault.Chunk, error) {
	return nil, vault.ErrOtherSpace
}

func (s switchingSearcher) DistanceBounds(context.Context, []string, vault.QueryVector, vault.Scope) (map[string]vault.DistanceBounds, error) {
	return nil, vault.ErrOtherSpace
}

func (s switchingSearcher) NearestChunks(ctx context.Context, ids []string, q vault.QueryVector, scope vault.Scope) ([]vault.Chunk, map[int64]float64, error) {
	if q.Values != nil {
		return nil, nil, vault.ErrOtherSpace
	}
	return s.Search.NearestChunks(ctx, ids, q, scope)
}

// TestSpaceSwitchDuringAQuestion: a question whose vector is of the space
// the index left a moment ago is answered by full text, and its graph
// expansion reads the neighbours without the vector, instead of failing.
func TestSpaceSwitchDuringAQuestion(t *testing.T) {
	store := quasarVault(t)
	p := mustPipeline(t, Options{Searcher: switchingSearcher{store.Search()}, Embedder: &bagEmbedder{}})
	r := mustRetrieve(t, p, Question{Text: "what is a quasar", AllowWeb: true})
	if !r.FullTextOnly || len(r.Direct) == 0 {
		t.Fatalf("full text only %v, %d direct hits", r.FullTextOnly, len(r.Direct))
	}
	if !traceSays(r, "vector", "switched") {
		t.Errorf("the trace does not say the index switched: %+v", r.Trace.Stages)
	}
	if _, _, err := p.expand(context.Background(), r.Direct, vault.QueryVector{Space: testSpace, Values: bagVector("quasar")}, testSettings(), vault.ScopeOpen); err != nil {
		t.Fatalf("graph expansion with a vector of the space left: %v", err)
	}
}

// traceSays reports whether r's trace has a stage named name whose note
// holds text.
func traceSays(r *Retrieval, name, text string) bool {
	for _, st := range r.Trace.Stages {
		if st.Name == name && strings.Contains(st.Note, text) {
			return true
		}
	}
	return false
}
