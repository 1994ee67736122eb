package rag

import (
	"context"
	"errors"
	"fmt"

	"github.com/vaultask/vaultask/vault"
	"golang.org/x/sync/errgroup"
)

// direct finds r's direct hits: vector and full-text search under r's
// scope side by side (searchArms), fused (fuse), capped per note and cut to
// fusion_top_k (diversify). It returns the query vector, without values
// when there is none (no embedder, or it failed: the search is then full
// text only).
func (p *Pipeline) direct(ctx context.Context, r *Retrieval, s Settings) (vault.QueryVector, error) {
	found, err := p.searchArms(ctx, r, s)
	if err != nil {
		return vault.QueryVector{}, err
	}
	s = s.forSpace(found.vec.Space)
	kept, err := p.diversify(ctx, r, s, p.fuse(r, s, found))
	if err != nil {
		return vault.QueryVector{}, err
	}
	r.Direct = kept
	return found.vec, nil
}

// arms are what the two searches found: the query vector (without values
// when there is none) and each arm's chunks, best first.
type arms struct {
	vec         vault.QueryVector
	vector, fts []vault.Chunk
}

// searchArms runs the full-text arm (SQLite's FTS5) and the vector arm (the
// query's embedding, the shortlist's scan, the rescore) side by side: the
// first to fail cancels the other, and its error is the question's. Why
// side by side, measured: reports/DECISIONS.md. The arms read separate
// states of the index: a chunk the embedder finishes in between may look
// embedded to full text (which then gives it no vector vote in the fusion)
// and be missing from the vector search, for that one question; the next
// sees it whole.
func (p *Pipeline) searchArms(ctx context.Context, r *Retrieval, s Settings) (arms, error) {
	var found arms
	ftsText := FTSText(r.Query)
	g, ctx := errgroup.WithContext(ctx)
	goArm(g, "full-text search", func() (err error) {
		found.fts, err = p.opts.Searcher.SearchFTS(ctx, ftsText, s.FTSTopK, r.Scope, s.FTSFields)
		return err
	})
	goArm(g, "vector search", func() (err error) {
		found.vec, found.vector, err = p.vectorArm(ctx, r, s)
		return err
	})
	if err := g.Wait(); err != nil {
		return arms{}, err
	}
	r.FullTextOnly = found.vec.Values == nil
	r.FTS = found.fts
	r.Trace.stage("fts", armHits(found.fts, FromFTS), fmt.Sprintf("top %d by BM25 (the score, lower is better) for %q", s.FTSTopK, ftsText))
	return found, nil
}

// goArm runs arm on g, a panic in it becoming its error: on a goroutine of
// its own it would end the process, where in the request's goroutine the
// server recovers it.
func goArm(g *errgroup.Group, what string, arm func() error) {
	g.Go(func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("%s: panic: %v", what, v)
			}
		}()
		return arm()
	})
}

// fuse fuses the vector hits near enough to vote (votingHits) with the
// full-text hits by reciprocal rank, or by score when s fuses by score, as
// s weighs them.
func (p *Pipeline) fuse(r *Retrieval, s Settings, found arms) []Hit {
	voting := votingHits(found.vector, s.VectorMaxDistance)
	if n := len(found.vector) - len(voting); n > 0 {
		r.Trace.stage("vector vote", armHits(voting, FromVector), fmt.Sprintf("%d vector hits farther than %.2g left out of the fusion", n, s.VectorMaxDistance))
	}
	fusion := fusionFor(s, r.Query)
	var fused []Hit
	if fusion.ByScore {
		fused = fuseScores(voting, found.fts, fusion)
	} else {
		fused = fuseRanks(voting, found.fts, fusion)
	}
	r.Trace.stage("fusion", fused, fusionNote(s, fusion))
	return fused
}

// fusionFor is the fusion s configures for query: the full-text weight 1
// when unset, and the question's language only when foreign vector votes
// are cut.
func fusionFor(s Settings, query string) fusionOptions {
	f := fusionOptions{ByNote: s.NoteFusion, FTSWeight: s.FTSWeight, Bonus: s.ConfidentBonus, FTSMargin: s.ConfidentFTSMargin,
		VectorGap: s.ConfidentVectorGap, ForeignCut: s.ForeignVoteCut}
	if s.FuseByScore {
		f.ByScore, f.VectorWeight, f.NoteSupport = true, s.VectorWeight, s.NoteSupport
	}
	if f.FTSWeight <= 0 {
		f.FTSWeight = 1
	}
	if s.ForeignVoteCut > 0 {
		f.Language = language(query)
	}
	return f
}

// fusionNote says in the trace how f fused.
func fusionNote(s Settings, f fusionOptions) string {
	if f.ByScore {
		how := fmt.Sprintf("a convex combination of min-max normalised scores, vector weight %.2g, full text %.2g", f.VectorWeight, 1-f.VectorWeight)
		if f.NoteSupport > 0 {
			how += fmt.Sprintf("; a note's best chunk gains %.2g × its second's score", f.NoteSupport)
		}
		if f.Language != "" && f.Language != "en" {
			how += fmt.Sprintf(", question in %q: vector scores of notes in another language cut by %.2g", f.Language, s.ForeignVoteCut)
		}
		return how
	}
	unit := "chunk"
	if f.ByNote {
		unit = "note"
	}
	how := fmt.Sprintf("reciprocal rank fusion, k=%d, by %s, full-text weight %.2g", rrfK, unit, f.FTSWeight)
	if s.ConfidentBonus > 0 {
		how += fmt.Sprintf(", %.2g first-rank votes more for a confident arm's first note (BM25 margin %.2g, cosine gap %.2g)",
			s.ConfidentBonus, s.ConfidentFTSMargin, s.ConfidentVectorGap)
	}
	if f.Language != "" && f.Language != "en" {
		how += fmt.Sprintf(", question in %q: vector votes for notes in another language cut by %.2g", f.Language, s.ForeignVoteCut)
	}
	return how
}

// diversify keeps at most max_chunks_per_doc of the fused hits per note
// (identical notes counting as one), then the top fusion_top_k.
func (p *Pipeline) diversify(ctx context.Context, r *Retrieval, s Settings, fused []Hit) ([]Hit, error) {
	hashOf, err := p.contentHashes(ctx, fused, r.Scope)
	if err != nil {
		return nil, err
	}
	kept, dropped := capPerNote(fused, s.MaxChunksPerDoc, hashOf)
	changes := changeList("cap dropped", dropped)
	if len(kept) > s.FusionTopK {
		changes = append(changes, fmt.Sprintf("fusion_top_k cut %d more", len(kept)-s.FusionTopK))
		kept = kept[:s.FusionTopK]
	}
	r.Trace.stage("diversity", kept, fmt.Sprintf("at most %d chunks per note (identical notes count as one; 0 is no cap), then the top %d", s.MaxChunksPerDoc, s.FusionTopK), changes...)
	return kept, nil
}

// vectorArm is the vector search for r's query under r's scope: the query
// vector (without values when there is none, and then no hits) and the
// hits, which it also sets as r.Vector.
func (p *Pipeline) vectorArm(ctx context.Context, r *Retrieval, s Settings) (vault.QueryVector, []vault.Chunk, error) {
	tr := &r.Trace
	embedded := r.Query
	if s.VectorKeywords {
		embedded = FTSText(r.Query)
	}
	vec, err := p.embedQuery(ctx, embedded)
	switch {
	case p.opts.Embedder == nil:
		tr.stage("vector", nil, "no embedder: full-text search only")
		return vault.QueryVector{}, nil, nil
	case err != nil && ctx.Err() != nil:
		// The request is gone: the embedding failed for that, not for
		// the embedder.
		return vault.QueryVector{}, nil, ctx.Err()
	case errors.Is(err, ErrNoSpaceEmbedder):
		tr.stage("vector", nil, fmt.Sprintf("%v (the index re-embeds with the configured model): full-text search only", err))
		return vault.QueryVector{}, nil, nil
	case err != nil:
		p.log.Warn("query embedding failed: full-text search only", keyErr, err)
		tr.stage("vector", nil, fmt.Sprintf("embedder unavailable (%v): full-text search only", err))
		return vault.QueryVector{}, nil, nil
	}
	vecHits, err := p.opts.Searcher.SearchVector(ctx, vec, s.VectorTopK, r.Scope)
	if errors.Is(err, vault.ErrOtherSpace) {
		// The index switched to a re-embedded space between the
		// question's embedding and its search: full text answers it.
		tr.stage("vector", nil, "the index switched to its re-embedded space during this question: full-text search only")
		return vault.QueryVector{}, nil, nil
	}
	if err != nil {
		return vault.QueryVector{}, nil, err
	}
	r.Vector = armHits(vecHits, FromVector)
	what := ""
	if s.VectorKeywords {
		what = fmt.Sprintf(" to the keywords %q", embedded)
	}
	tr.stage("vector", r.Vector, fmt.Sprintf("top %d by cosine distance%s (the score)", s.VectorTopK, what))
	return vec, vecHits, nil
}

// embedQuery embeds the query; no vector without an embedder.
func (p *Pipeline) embedQuery(ctx context.Context, query string) (vault.QueryVector, error) {
	if p.opts.Embedder == nil {
		return vault.QueryVector{}, nil
	}
	return p.opts.Embedder.EmbedQuery(ctx, p.opts.Searcher.ActiveSpace(), query)
}

func (p *Pipeline) contentHashes(ctx context.Context, hits []Hit, scope vault.Scope) (map[string]string, error) {
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Chunk.DocID)
	}
	docs, err := p.opts.Searcher.Docs(ctx, ids, scope)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(docs))
	for _, d := range docs {
		out[d.DocID] = d.ContentHash
	}
	return out, nil
}

// expand reads the one-hop neighbourhood of the hits' notes under scope and

// armHits is one arm's list as hits scored by the arm's own measure, for
// the trace.
func armHits(list []vault.Chunk, arm Source) []Hit {
	out := make([]Hit, len(list))
	for i, c := range list {
		out[i] = Hit{Chunk: c, Sources: []Source{arm}, Score: c.Score}
		if arm == FromVector {
			out[i].Distance, out[i].HasDistance = c.Score, true
		}
	}
	return out
}
