package ragconfig

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/vault"
)

// The full-text field weights and the vector distance limit reach the
// pipeline from config (ask, serve and eval alike): their defaults are the
// index's, and a changed one arrives.
func TestSettingsMapTheFieldWeights(t *testing.T) {
	got := Settings(config.Default())
	if got.FTSFields != vault.DefaultFieldWeights {
		t.Errorf("default bm25_* = %+v, want vault.DefaultFieldWeights %+v", got.FTSFields, vault.DefaultFieldWeights)
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

// Every retrieval key reaches the pipeline: changing any one of them changes
// the settings (a key added to config but not mapped here would change
// nothing, and an A/B arm on it would measure the defaults twice).
func TestEveryRetrievalKeyIsMapped(t *testing.T) {
	base := Settings(config.Default())
	other := map[string]string{"fusion": "note", "vector_query": "keywords", "confident_vector_gap": "0.3", "confident_fts_margin": "0.3",
		"coverage_thin": "0.3", "coverage_silent": "0.01", "fusion_by": "score", "vector_weight": "0.3"}
	typ := reflect.TypeOf(config.Retrieval{})
	def := reflect.ValueOf(config.Default().Retrieval)
	for i := range typ.NumField() {
		key := strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]
		var value string
		switch v := def.Field(i); v.Kind() {
		case reflect.Bool:
			value = strconv.FormatBool(!v.Bool())
		case reflect.Int:
			value = strconv.Itoa(int(v.Int()) + 1)
		case reflect.Float64:
			delta := 0.25
			if v.Float() >= 1 { // a share at its maximum
				delta = -delta
			}
			value = strconv.FormatFloat(v.Float()+delta, 'f', -1, 64)
		case reflect.String:
			value = other[key]
		}
		cfg := config.Default()
		if err := cfg.Set("retrieval."+key, value); err != nil {
			t.Fatalf("retrieval.%s=%s: %v", key, value, err)
		}
		if reflect.DeepEqual(Settings(cfg), base) {
			t.Errorf("retrieval.%s=%s changes nothing in rag.Settings: not mapped", key, value)
		}
	}
}

// The gap and the full-text margin left at auto are those measured for the
// embedding model configured (each model's distances have a scale of their
// own); a number set wins over them, and a model not measured gets
// USE-lite's.
func TestAutoDistancesFollowTheEmbeddingModel(t *testing.T) {
	for _, c := range []struct {
		model, gap, margin string
		want               [2]float64
	}{
		{"builtin/use-lite", "auto", "auto", [2]float64{0.05, 0.07}},
		{"builtin/multilingual-e5-small", "auto", "auto", [2]float64{0.01, 0.1}},
		{"openai/multilingual-e5-small-q4", "auto", "auto", [2]float64{0.01, 0.1}},
		{"ollama/bge-small-en-v1.5:latest", "auto", "auto", [2]float64{0.02, 0.15}},
		{"ollama/some-model-never-measured:latest", "auto", "auto", [2]float64{0.05, 0.07}},
		{"builtin/multilingual-e5-small", "0.02", "0.5", [2]float64{0.02, 0.5}},
		{"builtin/multilingual-e5-small", "0", "0", [2]float64{0, 0}},
	} {
		cfg := config.Default()
		for key, value := range map[string]string{"models.embedding": c.model, "retrieval.confident_vector_gap": c.gap, "retrieval.confident_fts_margin": c.margin} {
			if err := cfg.Set(key, value); err != nil {
				t.Fatal(err)
			}
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		s := Settings(cfg)
		if got := [2]float64{s.ConfidentVectorGap, s.ConfidentFTSMargin}; got != c.want {
			t.Errorf("%s with gap %s, margin %s: got gap, margin %v, want %v", c.model, c.gap, c.margin, got, c.want)
		}
	}
}

// While an index built with USE-lite is re-embedded with e5, questions are
// searched in USE-lite's space and judged by USE-lite's distances and
// coverage fit; a model without a fit of its own gets the fallback fit, and
// the coverage lines set in config replace every fit's own.
func TestSpacesCoverTheBuiltInModels(t *testing.T) {
	cfg := config.Default()
	if err := cfg.Set("models.embedding", "ollama/some-model-never-measured"); err != nil {
		t.Fatal(err)
	}
	s := Settings(cfg)
	want := map[string]rag.Distances{
		"builtin/use-lite":                 {ConfidentGap: 0.05, FTSMargin: 0.07, VectorWeight: 0.5},
		"builtin/multilingual-e5-small":    {ConfidentGap: 0.01, FTSMargin: 0.1, VectorWeight: 0.5},
		"builtin/bge-small-en-v1.5":        {ConfidentGap: 0.02, FTSMargin: 0.15, VectorWeight: 0.65, FuseByScore: true},
		"ollama/some-model-never-measured": {ConfidentGap: 0.05, FTSMargin: 0.07, VectorWeight: 0.5},
	}
	if !reflect.DeepEqual(s.SpaceDistances, want) {
		t.Errorf("space distances %v, want %v", s.SpaceDistances, want)
	}
	for model, fit := range map[string]string{"builtin/use-lite": "use-lite", "builtin/multilingual-e5-small": "multilingual-e5-small",
		"builtin/bge-small-en-v1.5": "bge-small-en-v1.5", "ollama/some-model-never-measured": "fallback"} {
		if got := s.Coverage[model].Name; got != fit {
			t.Errorf("coverage of %s: the fit %q, want %q", model, got, fit)
		}
		if err := s.Coverage[model].Validate(); err != nil {
			t.Errorf("coverage of %s: %v", model, err)
		}
	}
	if s.FullTextCoverage.Name != "full-text" {
		t.Errorf("full-text coverage: the fit %q", s.FullTextCoverage.Name)
	}
	if err := cfg.Set("retrieval.coverage_thin", "0.4"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("retrieval.coverage_silent", "0.02"); err != nil {
		t.Fatal(err)
	}
	s = Settings(cfg)
	for model, m := range s.Coverage {
		if m.Thin != 0.4 || m.Silent != 0.02 || m.Grey < m.Thin {
			t.Errorf("coverage lines set: %s's thin %v, silent %v, grey %v", model, m.Thin, m.Silent, m.Grey)
		}
	}
}

// fusion_by auto, the default, fuses by scores with the models measured
// better that way (bge-small) and by ranks with the others; score and rank
// fuse every model's searches so, each with the vector weight measured for
// its model (0.5 for a model not measured) unless vector_weight is set.
func TestFusionFollowsTheEmbeddingModel(t *testing.T) {
	for _, c := range []struct {
		model, by, weight string
		byScore           bool
		vectorWeight      float64
	}{
		{"builtin/bge-small-en-v1.5", "auto", "auto", true, 0.65},
		{"ollama/bge-small-en-v1.5:latest", "auto", "auto", true, 0.65},
		{"builtin/multilingual-e5-small", "auto", "auto", false, 0.5},
		{"builtin/use-lite", "auto", "auto", false, 0.5},
		{"ollama/some-model-never-measured:latest", "auto", "auto", false, 0.5},
		{"builtin/bge-small-en-v1.5", "rank", "auto", false, 0.65},
		{"builtin/bge-small-en-v1.5", "score", "auto", true, 0.65},
		{"builtin/multilingual-e5-small", "score", "auto", true, 0.5},
		{"builtin/use-lite", "score", "auto", true, 0.5},
		{"ollama/some-model-never-measured:latest", "score", "auto", true, 0.5},
		{"builtin/bge-small-en-v1.5", "score", "0.8", true, 0.8},
	} {
		cfg := config.Default()
		for key, value := range map[string]string{"models.embedding": c.model, "retrieval.fusion_by": c.by, "retrieval.vector_weight": c.weight} {
			if err := cfg.Set(key, value); err != nil {
				t.Fatal(err)
			}
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		s := Settings(cfg)
		if s.FuseByScore != c.byScore || s.VectorWeight != c.vectorWeight {
			t.Errorf("%s with fusion_by %s, vector_weight %s: by score %v, weight %v; want %v, %v", c.model, c.by, c.weight, s.FuseByScore, s.VectorWeight, c.byScore, c.vectorWeight)
		}
		// While an index is re-embedded, a question searched in another
		// built-in model's space is fused as that model's are.
		for model, d := range s.SpaceDistances {
			want := c.by == "score" || c.by == "auto" && model == "builtin/bge-small-en-v1.5" || c.by == "auto" && model == c.model && c.byScore
			if d.FuseByScore != want {
				t.Errorf("%s with fusion_by %s: the space of %s fuses by score %v, want %v", c.model, c.by, model, d.FuseByScore, want)
			}
		}
	}
	if s := Settings(config.Default()); !s.FuseByScore || s.NoteSupport != 0.3 {
		t.Errorf("the defaults (bge-small): by score %v, note support %v; want by score, 0.3", s.FuseByScore, s.NoteSupport)
	}
	cfg := config.Default()
	if err := cfg.Set("retrieval.fusion_by", "scores"); err == nil {
		if err := cfg.Validate(); err == nil {
			t.Error(`fusion_by "scores" validated`)
		}
	}
}
