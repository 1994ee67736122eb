package index

import (
	"context"
	"errors"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// TestZeroScopeSeesOpenOnly holds every read to the rule that a caller who
// leaves the scope at its zero value sees open notes only: a request that
// forgot to decide must never be shown a personal note.
func TestZeroScopeSeesOpenOnly(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{Space: vault.EmbeddingSpace{Model: "test/fixed", Dim: 8}, Sensitivity: Classifier{PersonalPaths: []string{"Private/**", "99 topics/Hidden.md"}}})
	mustApply(t, s, upserts(
		note("Recipes/Bread.md", "# Bread\nBake the sourdough loaf at 230 degrees. See [[Secret]]."),
		note("Private/Secret.md", "# Secret\nThe sourdough loaf recipe of grandma, see [[Bread]]."),
		note("99 topics/Baking.md", "# Baking\n<!-- begin:clippings -->\n- [[Bread]]\n- [[Secret]]\n<!-- end:clippings -->\n"),
		note("99 topics/Hidden.md", "# Hidden\n<!-- begin:clippings -->\n- [[Bread]]\n<!-- end:clippings -->\n"),
	))
	embedAll(t, s, func(string) []float32 { return []float32{1, 0, 0, 0, 0, 0, 0, 0} })
	mustShortlist(t, s)
	var zero vault.Scope
	ids := []string{"recipes/bread.md", "private/secret.md", "99 topics/baking.md", "99 topics/hidden.md"}

	// Under ScopeAll each read does find the personal note, so an empty
	// answer below is the filter's doing, not an empty index.
	personal := func(read string, sensitivities []string, all []string) {
		t.Helper()
		seen := false
		for _, s := range all {
			seen = seen || s == vault.SensitivityPersonal
		}
		if !seen {
			t.Fatalf("%s under ScopeAll found no personal note: the test proves nothing", read)
		}
		for _, s := range sensitivities {
			if s != vault.SensitivityOpen {
				t.Errorf("%s with a zero scope returned a %s note", read, s)
			}
		}
	}
	chunkSens := func(hits []vault.Chunk, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(hits))
		for i, h := range hits {
			out[i] = h.Sensitivity
		}
		return out
	}
	// nearestSens are the sensitivities of NearestChunks's chunks; with a
	// query vector it must give distances, or the vector path is untested.
	nearestSens := func(withVec bool) func([]vault.Chunk, map[int64]float64, error) []string {
		return func(hits []vault.Chunk, dist map[int64]float64, err error) []string {
			t.Helper()
			if withVec && err == nil && len(dist) == 0 {
				t.Fatal("NearestChunks gave no distance")
			}
			return chunkSens(hits, err)
		}
	}
	docSens := func(docs []vault.Doc, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(docs))
		for i, d := range docs {
			out[i] = d.Sensitivity
		}
		return out
	}
	neighbourSens := func(ns []vault.Neighbour, err error) []string {
		t.Helper()
		docs := make([]vault.Doc, len(ns))
		for i, n := range ns {
			docs[i] = n.Doc
		}
		return docSens(docs, err)
	}
	// hopSens are the sensitivities of every note a hop names: where it
	// starts, the topic note it goes through and where it ends.
	hopSens := func(hs []vault.Hop, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hs {
			ids = append(ids, h.From, h.To)
			if h.Via != "" {
				ids = append(ids, h.Via)
			}
		}
		return docSens(s.Search().Docs(ctx, ids, vault.ScopeAll))
	}
	linkSens := func(m map[string]vault.Doc, err error) []string {
		t.Helper()
		var docs []vault.Doc
		for _, d := range m {
			docs = append(docs, d)
		}
		return docSens(docs, err)
	}
	topicSens := func(ts []vault.Topic, err error) []string {
		t.Helper()
		docs := make([]vault.Doc, len(ts))
		for i, tp := range ts {
			docs[i] = tp.Doc
		}
		return docSens(docs, err)
	}
	entrySens := func(es []vault.NoteEntry, _ int, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.Sensitivity
		}
		return out
	}
	// boundSens are the sensitivities of the notes DistanceBounds bounds.
	boundSens := func(b map[string]vault.DistanceBounds, err error) []string {
		t.Helper()
		var ids []string
		for id := range b {
			ids = append(ids, id)
		}
		return docSens(s.Search().Docs(ctx, ids, vault.ScopeAll))
	}
	vec := []float32{1, 0, 0, 0, 0, 0, 0, 0}

	personal("SearchFTS", chunkSens(s.Search().SearchFTS(ctx, "sourdough loaf", 10, zero, vault.FieldWeights{})),
		chunkSens(s.Search().SearchFTS(ctx, "sourdough loaf", 10, vault.ScopeAll, vault.FieldWeights{})))
	personal("SearchVector", chunkSens(s.Search().SearchVector(ctx, s.queryOf(vec), 10, zero)), chunkSens(s.Search().SearchVector(ctx, s.queryOf(vec), 10, vault.ScopeAll)))
	personal("SearchVectorExact", chunkSens(s.Search().SearchVectorExact(ctx, s.queryOf(vec), 10, zero)), chunkSens(s.Search().SearchVectorExact(ctx, s.queryOf(vec), 10, vault.ScopeAll)))
	personal("NearestChunks", nearestSens(true)(s.Search().NearestChunks(ctx, ids, s.queryOf(vec), zero)), nearestSens(true)(s.Search().NearestChunks(ctx, ids, s.queryOf(vec), vault.ScopeAll)))
	personal("NearestChunks without a vector", nearestSens(false)(s.Search().NearestChunks(ctx, ids, s.queryOf(nil), zero)),
		nearestSens(false)(s.Search().NearestChunks(ctx, ids, s.queryOf(nil), vault.ScopeAll)))
	personal("DistanceBounds", boundSens(s.Search().DistanceBounds(ctx, ids, s.queryOf(vec), zero)), boundSens(s.Search().DistanceBounds(ctx, ids, s.queryOf(vec), vault.ScopeAll)))
	personal("Docs", docSens(s.Search().Docs(ctx, ids, zero)), docSens(s.Search().Docs(ctx, ids, vault.ScopeAll)))
	personal("Neighbours", neighbourSens(s.Browse().Neighbours(ctx, ids, zero)), neighbourSens(s.Browse().Neighbours(ctx, ids, vault.ScopeAll)))
	personal("Hops", hopSens(s.Search().Hops(ctx, ids, zero)), hopSens(s.Search().Hops(ctx, ids, vault.ScopeAll)))
	personal("ResolveLinks", linkSens(s.Search().ResolveLinks(ctx, []string{"Secret", "Bread"}, zero)),
		linkSens(s.Search().ResolveLinks(ctx, []string{"Secret", "Bread"}, vault.ScopeAll)))
	personal("Topics", topicSens(s.Browse().Topics(ctx, zero)), topicSens(s.Browse().Topics(ctx, vault.ScopeAll)))
	personal("NoteList", entrySens(s.Browse().NoteList(ctx, vault.NoteQuery{})), entrySens(s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll})))

	if d, alts, err := s.Browse().ResolveNote(ctx, "Secret", zero); !errors.Is(err, vault.ErrNoNote) {
		t.Errorf("ResolveNote(Secret) with a zero scope = %+v, %+v, %v; want ErrNoNote", d, alts, err)
	}
	if n, err := s.Browse().ReadNote(ctx, "private/secret.md", zero, 0, 0); !errors.Is(err, vault.ErrNoNote) {
		t.Errorf("ReadNote(private/secret.md) with a zero scope = %q, %v; want ErrNoNote", n.Text, err)
	}
	if n, err := s.Browse().ReadNote(ctx, "private/secret.md", vault.ScopeAll, 0, 0); err != nil || n.Sensitivity != vault.SensitivityPersonal {
		t.Fatalf("ReadNote(private/secret.md) under ScopeAll = %+v, %v: the test proves nothing", n.Doc, err)
	}
}
