package ragconfig

import (
	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/vault"
)

// Settings are the pipeline's sizes and weights from config.
func Settings(cfg config.Config) rag.Settings {
	r := cfg.Retrieval
	return rag.Settings{
		VectorTopK:       r.VectorTopK,
		FTSTopK:          r.FTSTopK,
		FusionTopK:       r.FusionTopK,
		NoteFusion:       r.Fusion == "note",
		FTSWeight:        r.FTSWeight,
		MaxChunksPerDoc:  r.MaxChunksPerDoc,
		GraphEnabled:     r.GraphEnabled,
		GraphMaxSiblings: r.GraphMaxSiblings,
		GraphDiscount:    r.GraphDiscount,
		GraphMaxSlots:    r.GraphMaxSlots,
		GraphMemberSlots: r.GraphMemberSlots,
		GraphMapSlots:    r.GraphMapSlots,
		GraphMapMinLinks: r.GraphMapMinLinks,
		RerankTopK:       r.RerankTopK,
		FinalTopK:        r.FinalTopK,
		ThinHits:         cfg.Web.ThinHits,
		ThinDistance:     cfg.Web.ThinDistance,
		WebResults:       cfg.Web.MaxResults,
		FTSFields: vault.FieldWeights{Title: r.BM25Title, Aliases: r.BM25Aliases, Headings: r.BM25Headings, Path: r.BM25Path,
			Topics: r.BM25Topics, Body: r.BM25Body, Links: r.BM25Links},
		VectorMaxDistance:  r.VectorMaxDistance,
		VectorKeywords:     r.VectorQuery == "keywords",
		ConfidentBonus:     r.ConfidentBonus,
		ConfidentFTSMargin: r.ConfidentFTSMargin,
		ConfidentVectorGap: r.ConfidentVectorGap,
		ForeignVoteCut:     r.LanguageVoteCut,
	}
}

// Limits are the bounds on a question's size from config.
func Limits(cfg config.Config) rag.Limits {
	return rag.Limits{QuestionBytes: cfg.API.MaxQuestionBytes, TranscriptBytes: cfg.API.MaxTranscriptBytes}
}
