package eval

import (
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/config"
)

// Any retrieval.* key is an arm's, with or without its section, through
// config.Set: no list to keep.
func TestArmConfigSetsAnyRetrievalKey(t *testing.T) {
	t.Parallel()
	base := config.Default()
	cfg, err := ArmConfig(base, "fts_weight=3, retrieval.graph_max_slots=2,arms=fts")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Retrieval.FTSWeight != 3 || cfg.Retrieval.GraphMaxSlots != 2 || cfg.Retrieval.VectorTopK != 0 || cfg.Retrieval.FTSTopK != base.Retrieval.FTSTopK {
		t.Errorf("arm retrieval = %+v", cfg.Retrieval)
	}
	if cfg, err := ArmConfig(base, "models.rerank=ollama/qwen3:8b,rerank_top_k=20"); err != nil || cfg.Models.Rerank != "ollama/qwen3:8b" || cfg.Retrieval.RerankTopK != 20 {
		t.Errorf("rerank arm: %+v, %v", cfg.Models, err)
	}
	if cfg, err := ArmConfig(base, "models.rerank=llamacpp/bge-reranker-v2-m3,models.rerank_kind=cross-encoder,models.rerank_budget=3s,models.rerank_batch=5"); err != nil || cfg.Models.RerankKind != "cross-encoder" || cfg.Models.RerankBudget != 3*time.Second || cfg.Models.RerankBatch != 5 {
		t.Errorf("cross-encoder arm: %+v, %v", cfg.Models, err)
	}
	if base.Retrieval.FTSWeight == 3 {
		t.Error("ArmConfig changed its base")
	}
	for spec, want := range map[string]string{
		"web.thin_hits=2":                       `web.thin_hits: an arm sets retrieval.* keys, models.rerank* or arms only`,
		"models.rerank=nope":                    `models.rerank`,
		"models.rerank_kind=cohere":             `models.rerank_kind`,
		"models.rerankish=1":                    `models.rerankish`,
		"fts_weight=1,retrieval.fts_weight=2":   "retrieval.fts_weight given twice",
		"retrieval.fts_wieght=2":                `unknown key "retrieval.fts_wieght"`,
		"fts_weight=20":                         "retrieval.fts_weight (20) must be <= 10",
		"arms=vector,vector_top_k=0":            "retrieval.vector_top_k + retrieval.fts_top_k",
		"arms=hybrid,=3":                        "want key=value",
		"retrieval.graph_enabled=yes,arms=fts":  `retrieval.graph_enabled="yes": not a boolean`,
		"retrieval.max_chunks_per_doc=-1":       "retrieval.max_chunks_per_doc (-1) must be >= 0",
		"retrieval.final_top_k=2,rerank_top_k=": `retrieval.rerank_top_k="": not an integer`,
	} {
		if _, err := ArmConfig(base, spec); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "--ab "+`"`+spec+`"`) {
			t.Errorf("--ab %s: got %v, want an error with %q", spec, err, want)
		}
	}
}

func TestParseArmsLabels(t *testing.T) {
	t.Parallel()
	arms, err := ParseArms(config.Default(), []string{"graph_enabled=false", "arms=vector"})
	if err != nil {
		t.Fatal(err)
	}
	if len(arms) != 3 || arms[0].Label != "A" || !strings.HasPrefix(arms[0].Settings, "configured: graph_enabled=true vector_top_k=") ||
		arms[1].Label != "B" || arms[1].Settings != "graph_enabled=false" || arms[1].Config.Retrieval.GraphEnabled ||
		arms[2].Label != "C" || arms[2].Config.Retrieval.FTSTopK != 0 {
		t.Fatalf("arms = %+v", arms)
	}
	if _, err := ParseArms(config.Default(), make([]string, MaxSpecs+1)); err == nil || !strings.Contains(err.Error(), "labelled B to Z") {
		t.Errorf("too many arms: %v", err)
	}
}
