package rag

import (
	"cmp"
	"slices"

	"github.com/vaultask/vaultask/vault"
)

// fuseScores merges the vector and full-text searches by their scores
// rather than their ranks: a convex combination of each arm's score,
// min-max normalised over the arm's own list (Bruch, Gai and Ingber, "An
// Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 2023). A
// chunk scores f.VectorWeight × its vector score + (1 − f.VectorWeight) ×
// its full-text score, each from 0 (the arm's last, or not returned by
// it) to 1 (the arm's first); the vector score is 1 − the cosine distance,
// the full-text score −BM25. Rank fusion keeps only the order of each arm
// and so forgets how far apart its scores are: a far paraphrase the
// vector search places a clear second may end behind a dozen notes that
// match one of its words. As in fuseRanks, a chunk without its vector yet takes
// its full-text score for its vector score when there is a vector list, and
// f.ForeignCut lowers a foreign note's vector score for a Swedish or
// Turkish question.
//
// A note's best chunk then gains f.NoteSupport × the fused score of the
// note's second-best chunk (see supportNotes).
func fuseScores(vector, fts []vault.Chunk, f fusionOptions) []Hit {
	byRow := map[int64]*Hit{}
	var order []int64
	hit := func(c vault.Chunk) *Hit {
		h, ok := byRow[c.RowID]
		if !ok {
			h = &Hit{Chunk: c}
			byRow[c.RowID] = h
			order = append(order, c.RowID)
		}
		return h
	}
	vecNorm := normalised(vector, func(c vault.Chunk) float64 { return -c.Score })
	ftsNorm := normalised(fts, func(c vault.Chunk) float64 { return -c.Score })
	weight := foreignWeights(vector, f)
	vecScore := map[int64]float64{}
	for i, c := range vector {
		h := hit(c)
		h.Sources = append(h.Sources, FromVector)
		h.VectorRank, h.Distance, h.HasDistance = i+1, c.Score, true
		vecScore[c.RowID] = weight[c.DocID] * vecNorm[i]
	}
	for i, c := range fts {
		h := hit(c)
		h.Sources = append(h.Sources, FromFTS)
		h.FTSRank = i + 1
		if _, ok := vecScore[c.RowID]; !ok && len(vector) > 0 && !c.Embedded {
			vecScore[c.RowID] = ftsNorm[i]
		}
		h.Score += (1 - f.VectorWeight) * ftsNorm[i]
	}
	out := make([]Hit, len(order))
	for i, id := range order {
		h := byRow[id]
		h.Score += f.VectorWeight * vecScore[id]
		out[i] = *h
	}
	byScore := func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) }
	slices.SortStableFunc(out, byScore)
	if f.NoteSupport > 0 {
		supportNotes(out, f.NoteSupport)
		slices.SortStableFunc(out, byScore)
	}
	return out
}

// supportNotes adds to the score of each note's best hit (hits are best
// first) share × the score of the note's second-best hit. A note with two
// passages that match the question is likelier to answer it than a note
// with one that matches as well: on the demo vault, "At what temperature
// and for how long do I bake the sourdough?" finds the recipe's schedule,
// its introduction and its dough section among the first five chunks, and
// a starter clipping whose heading is "Timing and temperature" first by a
// hair. Only the second chunk counts, so a note long enough to match
// everywhere gains no more than a note of two sections.
func supportNotes(hits []Hit, share float64) {
	first := map[string]int{}
	seconded := map[string]bool{}
	for i, h := range hits {
		doc := h.Chunk.DocID
		j, seen := first[doc]
		switch {
		case !seen:
			first[doc] = i
		case !seconded[doc]:
			seconded[doc] = true
			hits[j].Score += share * h.Score
		}
	}
}

// normalised is each chunk's score (higher better) min-max normalised over
// list: 1 for the best, 0 for the worst, all 1 when they are equal.
func normalised(list []vault.Chunk, score func(vault.Chunk) float64) []float64 {
	out := make([]float64, len(list))
	if len(list) == 0 {
		return out
	}
	lo, hi := score(list[0]), score(list[0])
	for _, c := range list {
		lo, hi = min(lo, score(c)), max(hi, score(c))
	}
	for i, c := range list {
		out[i] = 1
		if hi > lo {
			out[i] = (score(c) - lo) / (hi - lo)
		}
	}
	return out
}
