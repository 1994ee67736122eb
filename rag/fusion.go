package rag

import (
	"cmp"
	"slices"
	"strings"

	"github.com/vaultask/vaultask/vault"
)

// rrfK is reciprocal rank fusion's constant: a hit at rank r in a list adds
// 1/(rrfK + r) to its score.
const rrfK = 60

// fusionOptions is how fuseRanks weighs the two rankings.
type fusionOptions struct {
	// ByNote fuses per note rather than per chunk (see fuseRanks).
	ByNote bool
	// FTSWeight weighs a full-text rank against a vector rank (weight 1);
	// 0 means 1.
	FTSWeight float64
	// Bonus is added to the score of an arm's confident first note, in
	// first-rank votes (Bonus/(rrfK+1)); 0 gives none. Full text is
	// confident when its first note's BM25 leads the second note's by at
	// least FTSMargin of itself, the vector arm when its first note is at
	// least VectorGap nearer than its second (cosine distance). An arm
	// with a single note is confident.
	Bonus, FTSMargin, VectorGap float64
	// Language is the question's language (see language), "" when unknown.
	// When it is known and not English, ForeignCut is the share of its
	// vote (and bonus) that a vector hit loses when its note is in another
	// known language; 0 keeps every vote whole.
	Language   string
	ForeignCut float64
	// ByScore fuses by scores instead (fuseScores), VectorWeight the
	// vector score's weight in a convex combination with the full-text
	// score's.
	ByScore      bool
	VectorWeight float64
	// NoteSupport is the share of the fused score of a note's second-best
	// chunk that its best chunk gains in a fusion by scores.
	NoteSupport float64
}

// fuseRanks merges the vector and full-text rankings by reciprocal rank fusion,
// keeping each hit's provenance, ranks and vector distance. A full-text
// rank adds f.FTSWeight/(rrfK + rank), a vector rank 1/(rrfK + rank).
//
// With f.ByNote the notes are ranked by fusing per note: a note's rank in an
// arm is the rank of its best chunk among the notes that arm returned, and
// the note's best chunk scores the note's fused score. Each further chunk of
// a note competes on its own chunk-level score, which never exceeds its
// note's, so it stays behind the note's best chunk without taking the
// place of other notes' best ones. Without ByNote every chunk is fused on
// its own; on this project's help-corpus question set that did better at
// every depth (reports/RETRIEVAL.md), so it is the default (retrieval.fusion).
//
// A chunk whose vector is not computed yet (a note just written, waiting
// for the background embedder) cannot be in the vector ranking, so when
// that ranking is there, such a full-text hit is given a vector vote at its
// full-text rank: otherwise a note written a second ago, matching every
// word of the question, would only tie with whatever note is nearest in
// vector space.
//
// Rank fusion forgets how sure each arm was; f.Bonus gives some of it back
// (see fusionOptions). An English-only embedder places a Swedish or Turkish
// question near notes in any language, so f.ForeignCut lowers the vote of
// a note in another language than the question's.
func fuseRanks(vector, fts []vault.Chunk, f fusionOptions) []Hit {
	byRow := map[int64]*Hit{}
	var order []int64
	noteScore := map[string]float64{}
	impute := len(vector) > 0
	vectorWeight := foreignWeights(vector, f)
	add := func(list []vault.Chunk, arm Source, weightOf func(vault.Chunk) float64) {
		noteRank := map[string]int{}
		for i, c := range list {
			h, ok := byRow[c.RowID]
			if !ok {
				h = &Hit{Chunk: c}
				byRow[c.RowID] = h
				order = append(order, c.RowID)
			}
			h.Sources = append(h.Sources, arm)
			if arm == FromVector {
				h.VectorRank, h.Distance, h.HasDistance = i+1, c.Score, true
			} else {
				h.FTSRank = i + 1
			}
			weight := weightOf(c)
			if arm == FromFTS && impute && !c.Embedded && h.VectorRank == 0 { // a vote only where the vector arm has none
				weight++
			}
			h.Score += weight / float64(rrfK+i+1)
			if _, seen := noteRank[c.DocID]; !seen {
				noteRank[c.DocID] = len(noteRank) + 1
				noteScore[c.DocID] += weight / float64(rrfK+noteRank[c.DocID])
			}
		}
		if f.Bonus > 0 && confident(list, arm, f) {
			first := list[0]
			bonus := weightOf(first) * f.Bonus / float64(rrfK+1)
			byRow[first.RowID].Score += bonus
			noteScore[first.DocID] += bonus
		}
	}
	add(vector, FromVector, func(c vault.Chunk) float64 { return vectorWeight[c.DocID] })
	ftsWeight := cmp.Or(f.FTSWeight, 1)
	add(fts, FromFTS, func(vault.Chunk) float64 { return ftsWeight })
	out := make([]Hit, len(order))
	for i, id := range order {
		out[i] = *byRow[id]
	}
	slices.SortStableFunc(out, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	if !f.ByNote {
		return out
	}
	chunkScore := make(map[int64]float64, len(out))
	best := map[string]bool{}
	for i, h := range out {
		chunkScore[h.Chunk.RowID] = h.Score
		if !best[h.Chunk.DocID] {
			best[h.Chunk.DocID] = true
			out[i].Score = noteScore[h.Chunk.DocID]
		}
	}
	slices.SortStableFunc(out, func(a, b Hit) int {
		da, db := a.Chunk.DocID, b.Chunk.DocID
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(noteScore[db], noteScore[da]), cmp.Compare(da, db),
			cmp.Compare(chunkScore[b.Chunk.RowID], chunkScore[a.Chunk.RowID]))
	})
	return out
}

// confident reports whether an arm's first note clearly leads its second,
// by the arm's own score (list is best first): for full text a relative
// BM25 margin (BM25 is negative, lower is better), for vectors a gap in
// cosine distance.
func confident(list []vault.Chunk, arm Source, f fusionOptions) bool {
	if len(list) == 0 {
		return false
	}
	first := list[0]
	i := slices.IndexFunc(list, func(c vault.Chunk) bool { return c.DocID != first.DocID })
	if i < 0 {
		return true
	}
	second := list[i].Score
	if arm == FromVector {
		return second-first.Score >= f.VectorGap
	}
	return first.Score < 0 && (second-first.Score)/-first.Score >= f.FTSMargin
}

// foreignWeights is each vector hit's note's vote weight: 1, or 1 −
// f.ForeignCut for a note whose text (its chunks among hits together) is
// in another language than a non-English question.
func foreignWeights(hits []vault.Chunk, f fusionOptions) map[string]float64 {
	out := make(map[string]float64, len(hits))
	text := map[string]*strings.Builder{}
	for _, c := range hits {
		out[c.DocID] = 1
		if text[c.DocID] == nil {
			text[c.DocID] = &strings.Builder{}
		}
		text[c.DocID].WriteString(c.Title + "\n" + c.HeadingPath + "\n" + c.Body + "\n")
	}
	if f.ForeignCut <= 0 || f.Language == "" || f.Language == "en" {
		return out
	}
	for doc, b := range text {
		if lang := language(b.String()); lang != "" && lang != f.Language {
			out[doc] = 1 - min(f.ForeignCut, 1)
		}
	}
	return out
}

// votingHits is the vector hits that vote in the fusion: those within
// maxDistance of the query, all of them when maxDistance is 0. A vector
// search returns its k nearest whether or not anything is near; a far-off
// hit's reciprocal rank would still push it past full-text hits that match
// the question's words. hits are nearest first, so the voters keep their
// ranks.
func votingHits(hits []vault.Chunk, maxDistance float64) []vault.Chunk {
	if maxDistance <= 0 {
		return hits
	}
	n := 0
	for n < len(hits) && hits[n].Score <= maxDistance {
		n++
	}
	return hits[:n]
}

// capPerNote keeps at most maxPerDoc chunks of each note, best first, and
// returns the kept and the dropped hits, each in input order. Notes with the
// same content hash (hashOf, by doc id) are the same text at two paths and
// count as one note. maxPerDoc <= 0 keeps everything.
func capPerNote(hits []Hit, maxPerDoc int, hashOf map[string]string) (kept, dropped []Hit) {
	if maxPerDoc <= 0 {
		return hits, nil
	}
	count := map[string]int{}
	for _, h := range hits {
		key := h.Chunk.DocID
		if hash := hashOf[key]; hash != "" {
			key = hash
		}
		if count[key] >= maxPerDoc {
			dropped = append(dropped, h)
			continue
		}
		count[key]++
		kept = append(kept, h)
	}
	return kept, dropped
}
