package rag

import (
	"fmt"

	"github.com/vaultask/vaultask/vault"
)

// Settings size each stage; cmd fills them from config's retrieval and web
// sections.
type Settings struct {
	VectorTopK int
	FTSTopK    int
	FusionTopK int
	// NoteFusion fuses per note rather than per chunk (see fuseRanks).
	NoteFusion bool
	// FuseByScore fuses the two searches by a convex combination of their
	// normalised scores, VectorWeight the vector score's weight
	// (fuseScores), instead of by their ranks; NoteSupport is the share of
	// a note's second chunk's score its first chunk gains in that fusion.
	FuseByScore  bool
	VectorWeight float64
	NoteSupport  float64
	// FTSWeight weighs the full-text ranking in the fusion; 0 means 1.
	FTSWeight float64
	// FTSFields weigh a full-text match by its field (see
	// vault.FieldWeights); the zero value means vault.DefaultFieldWeights.
	FTSFields vault.FieldWeights
	// VectorMaxDistance keeps vector hits farther from the query out of
	// the fusion (see votingHits); 0 means no limit.
	VectorMaxDistance float64
	// VectorKeywords embeds the query's keywords (FTSText) instead of the
	// question as asked.
	VectorKeywords bool
	// ConfidentBonus, ConfidentFTSMargin and ConfidentVectorGap give an
	// arm's confident first note a bonus in the fusion (see fusionOptions); a
	// bonus of 0 gives none.
	ConfidentBonus, ConfidentFTSMargin, ConfidentVectorGap float64
	// ForeignVoteCut is the share of its fusion vote a vector hit loses
	// when its note is in another language than a non-English question
	// (see fusionOptions); 0 keeps every vote whole.
	ForeignVoteCut float64
	// MaxChunksPerDoc caps the chunks of one note; 0 means no cap.
	MaxChunksPerDoc  int
	GraphEnabled     bool
	GraphMaxSiblings int
	GraphDiscount    float64
	GraphMaxSlots    int
	// GraphMemberSlots are final places only a member of a topic note
	// among the hits may take, beside GraphMaxSlots (see selectFinal).
	GraphMemberSlots int
	// GraphMapSlots are final places only a note linked from a map of
	// content among the hits may take: a hit note linking to at least
	// GraphMapMinLinks notes (see expandHits and selectFinal).
	GraphMapSlots    int
	GraphMapMinLinks int
	RerankTopK       int
	FinalTopK        int
	// SpaceDistances are, by embedding model, the confident gap and
	// full-text margin that replace ConfidentVectorGap and
	// ConfidentFTSMargin when a question is searched in that model's
	// space: models spread their distances on scales of their own, and
	// while an index is re-embedded questions are searched in the old
	// model's space.
	SpaceDistances map[string]Distances
	// Coverage judge how well the vault covers a question searched in an
	// embedding model's space, by model; FullTextCoverage one searched by
	// full text alone (see Pipeline.judgeCoverage). A question without a
	// model of its own is judged by FullTextCoverage, and without that
	// covered when anything matched, silent when nothing did.
	Coverage         map[string]CoverageModel
	FullTextCoverage CoverageModel
	// WebResults is how many web results to ask for.
	WebResults int
}

// Distances are the cosine gap that makes an embedding space's first
// note confident (see Settings.SpaceDistances), and the BM25 margin full
// text must lead by to outvote its vector search (ConfidentFTSMargin).
type Distances struct {
	ConfidentGap, FTSMargin float64
	// VectorWeight is the model's vector weight in a fusion by scores,
	// FuseByScore whether its searches are fused by scores.
	VectorWeight float64
	FuseByScore  bool
}

// forSpace is s for a question searched in space: its model's distances
// when SpaceDistances has them.
func (s Settings) forSpace(space vault.EmbeddingSpace) Settings {
	if d, ok := s.SpaceDistances[space.Model]; ok {
		s.ConfidentVectorGap, s.ConfidentFTSMargin = d.ConfidentGap, d.FTSMargin
		s.VectorWeight, s.FuseByScore = d.VectorWeight, d.FuseByScore
	}
	return s
}

func (s Settings) validate() error {
	switch {
	case s.FinalTopK < 1 || s.FusionTopK < 1:
		return fmt.Errorf("rag: final_top_k (%d) and fusion_top_k (%d) must be at least 1", s.FinalTopK, s.FusionTopK)
	case s.VectorTopK < 0 || s.FTSTopK < 0 || s.VectorTopK+s.FTSTopK == 0:
		return fmt.Errorf("rag: vector_top_k (%d) and fts_top_k (%d) must not be negative, nor both 0", s.VectorTopK, s.FTSTopK)
	}
	for model, m := range s.Coverage {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("rag: coverage of %s: %w", model, err)
		}
	}
	if len(s.FullTextCoverage.Features) > 0 {
		if err := s.FullTextCoverage.Validate(); err != nil {
			return fmt.Errorf("rag: full-text coverage: %w", err)
		}
	}
	return nil
}
