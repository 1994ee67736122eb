package ragconfig

import (
	"strconv"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/vault"
)

// Settings are the pipeline's sizes and weights from config. A distance (or
// the full-text margin) set to config.Auto is the one measured for the
// embedding model (see llm.Distances).
func Settings(cfg config.Config) rag.Settings {
	r := cfg.Retrieval
	spaces := spaceDistances(cfg)
	own := spaces[cfg.Models.Embedding]
	return rag.Settings{
		VectorTopK:       r.VectorTopK,
		FTSTopK:          r.FTSTopK,
		FusionTopK:       r.FusionTopK,
		NoteFusion:       r.Fusion == "note",
		FuseByScore:      own.FuseByScore,
		VectorWeight:     own.VectorWeight,
		NoteSupport:      r.NoteSupport,
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
		SpaceDistances:   spaces,
		Coverage:         coverageModels(cfg),
		FullTextCoverage: coverageModel(llm.FullTextCoverage(), cfg.Retrieval),
		WebResults:       cfg.Web.MaxResults,
		FTSFields: vault.FieldWeights{Title: r.BM25Title, Aliases: r.BM25Aliases, Headings: r.BM25Headings, Path: r.BM25Path,
			Topics: r.BM25Topics, Body: r.BM25Body, Links: r.BM25Links},
		VectorMaxDistance:  r.VectorMaxDistance,
		VectorKeywords:     r.VectorQuery == "keywords",
		ConfidentBonus:     r.ConfidentBonus,
		ConfidentFTSMargin: own.FTSMargin,
		ConfidentVectorGap: own.ConfidentGap,
		ForeignVoteCut:     r.LanguageVoteCut,
	}
}

// Limits are the bounds on a question's size from config.
func Limits(cfg config.Config) rag.Limits {
	return rag.Limits{QuestionBytes: cfg.API.MaxQuestionBytes, TranscriptBytes: cfg.API.MaxTranscriptBytes}
}

// distance is a validated distance (or probability) setting: auto's value,
// or the number it names. A setting that is neither (Validate refuses it) is auto's value.
func distance(setting string, auto float64) float64 {
	if n, err := strconv.ParseFloat(setting, 64); err == nil {
		return n
	}
	return auto
}

// spaceModels are the ids of the models an index may be searched with: each
// built-in one (an index being re-embedded is searched with the built-in
// model it was built with), then the configured one.
func spaceModels(cfg config.Config) []string {
	var ids []string
	for _, s := range llm.BuiltinModels() {
		ids = append(ids, s.ID)
	}
	return append(ids, cfg.Models.Embedding)
}

// spaceDistances are the distances of the configured embedding model and of
// each built-in one (an index being re-embedded is searched with the
// built-in model it was built with), as the settings give them.
func spaceDistances(cfg config.Config) map[string]rag.Distances {
	out := map[string]rag.Distances{}
	for _, model := range spaceModels(cfg) {
		d := llm.EmbeddingDistances(model)
		out[model] = rag.Distances{
			ConfidentGap: distance(cfg.Retrieval.ConfidentVectorGap, d.ConfidentGap),
			FTSMargin:    distance(cfg.Retrieval.ConfidentFTSMargin, d.FTSMargin),
			VectorWeight: distance(cfg.Retrieval.VectorWeight, d.VectorWeight),
			FuseByScore:  cfg.Retrieval.FusionBy == "score" || cfg.Retrieval.FusionBy == config.Auto && d.FuseByScore,
		}
	}
	return out
}

// coverageModels are the coverage fits of the configured embedding model
// and of each built-in one (an index being re-embedded is searched with the
// model it was built with), by model, with the lines the settings move.
func coverageModels(cfg config.Config) map[string]rag.CoverageModel {
	out := map[string]rag.CoverageModel{}
	for _, model := range spaceModels(cfg) {
		fit, _ := llm.EmbeddingCoverage(model)
		out[model] = coverageModel(fit, cfg.Retrieval)
	}
	return out
}

// coverageModel is fit as the pipeline runs it, with retrieval.coverage_thin
// and retrieval.coverage_silent in place of its own lines when they are set
// (the grey band then starts at the thin line or above).
func coverageModel(fit llm.CoverageFit, r config.Retrieval) rag.CoverageModel {
	m := rag.CoverageModel{Name: fit.Name, Features: fit.Features, Mean: fit.Mean, Scale: fit.Scale, Weights: fit.Weights,
		Bias: fit.Bias, Thin: distance(r.CoverageThin, fit.Thin), Silent: distance(r.CoverageSilent, fit.Silent), Grey: fit.Grey}
	m.Silent = min(m.Silent, m.Thin)
	m.Grey = max(m.Grey, m.Thin)
	return m
}
