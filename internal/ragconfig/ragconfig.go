package ragconfig

import (
	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/rag"
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
		RerankTopK:       r.RerankTopK,
		FinalTopK:        r.FinalTopK,
		ThinHits:         cfg.Web.ThinHits,
		ThinDistance:     cfg.Web.ThinDistance,
		WebResults:       cfg.Web.MaxResults,
		FTSFields: index.FieldWeights{Title: r.BM25Title, Aliases: r.BM25Aliases, Headings: r.BM25Headings, Path: r.BM25Path,
			Topics: r.BM25Topics, Body: r.BM25Body, Links: r.BM25Links},
		VectorMaxDistance:  r.VectorMaxDistance,
		VectorKeywords:     r.VectorQuery == "keywords",
		ConfidentBonus:     r.ConfidentBonus,
		ConfidentFTSMargin: r.ConfidentFTSMargin,
		ConfidentVectorGap: r.ConfidentVectorGap,
		ForeignVoteCut:     r.LanguageVoteCut,
	}
}
