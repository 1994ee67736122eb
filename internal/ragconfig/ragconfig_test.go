package ragconfig

import (
	"testing"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/index"
)

// The full-text field weights and the vector distance limit reach the
// pipeline from config (ask, serve and eval alike): their defaults are the
// index's, and a changed one arrives.
func TestSettingsMapTheFieldWeights(t *testing.T) {
	got := Settings(config.Default())
	if got.FTSFields != index.DefaultFieldWeights {
		t.Errorf("default bm25_* = %+v, want index.DefaultFieldWeights %+v", got.FTSFields, index.DefaultFieldWeights)
	}
	if got.VectorMaxDistance != 0 {
		t.Errorf("default vector_max_distance = %v, want 0 (no limit)", got.VectorMaxDistance)
	}
	cfg := config.Default()
	if err := cfg.Set("retrieval.bm25_links", "2"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("retrieval.vector_max_distance", "0.6"); err != nil {
		t.Fatal(err)
	}
	if got := Settings(cfg); got.FTSFields.Links != 2 || got.VectorMaxDistance != 0.6 {
		t.Errorf("changed bm25_links and vector_max_distance: %+v, %v", got.FTSFields, got.VectorMaxDistance)
	}
}
