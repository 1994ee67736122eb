package eval

import (
	"fmt"
	"strings"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/rag"
)

// Arm is one set of retrieval settings under evaluation.
type Arm struct {
	// Label is A for the configured settings, then B, C, … per --ab spec.
	Label string `json:"label"`
	// Settings are the --ab spec, or the configured retrieval.* values.
	Settings string `json:"settings"`
	// Config is the configuration with the arm's keys set and validated.
	Config config.Config `json:"-"`
	// Pipeline retrieves with the arm's settings; the caller, which wires
	// pipelines, sets it from Config.
	Pipeline *rag.Pipeline `json:"-"`
}

// MaxSpecs is how many --ab specs a run takes: they are labelled B to Z.
const MaxSpecs = 'Z' - 'B' + 1

// armsKey switches a search arm off: fts sets vector_top_k to 0, vector
// sets fts_top_k to 0, hybrid keeps both as they are.
const armsKey = "arms"

// retrievalSection is the one section an arm may set keys in: the eval
// measures retrieval.
const retrievalSection = "retrieval."

// rerankKey and the keys it begins (models.rerank_kind, _base_url,
// _budget, _batch) are the keys outside retrievalSection an arm may set:
// the rerank model is a retrieval stage. The caller wires the arm's
// reranker.
const rerankKey = "models.rerank"

// ParseArms returns a run's arms without their pipelines: A, base as
// configured, then one per --ab spec. It is meant to run before the index
// is opened, so that a bad spec fails fast.
func ParseArms(base config.Config, specs []string) ([]Arm, error) {
	if len(specs) > MaxSpecs {
		return nil, fmt.Errorf("%d --ab arms: at most %d, labelled B to Z", len(specs), MaxSpecs)
	}
	arms := []Arm{{Label: "A", Settings: configured(base), Config: base}}
	for i, spec := range specs {
		cfg, err := ArmConfig(base, spec)
		if err != nil {
			return nil, err
		}
		arms = append(arms, Arm{Label: string(rune('B' + i)), Settings: spec, Config: cfg})
	}
	return arms, nil
}

// ArmConfig is base with one --ab spec applied, key=value[,key=value…], and
// validated like any configuration, so that errors name the key. A key is
// any retrieval.* key, with or without "retrieval.", set by config.Set,
// models.rerank and its models.rerank_* settings, or arms=fts|vector|hybrid.
func ArmConfig(base config.Config, spec string) (config.Config, error) {
	cfg := base
	seen := map[string]bool{}
	arms := ""
	for kv := range strings.SplitSeq(spec, ",") {
		key, value, ok := strings.Cut(kv, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		path := key
		if key != armsKey && !strings.Contains(key, ".") {
			path = retrievalSection + key
		}
		switch {
		case !ok || key == "":
			return cfg, fmt.Errorf("--ab %q: want key=value[,key=value…]", spec)
		case seen[path]:
			return cfg, fmt.Errorf("--ab %q: %s given twice", spec, path)
		case path == armsKey:
			arms = value
		case !strings.HasPrefix(path, retrievalSection) && path != rerankKey && !strings.HasPrefix(path, rerankKey+"_"):
			return cfg, fmt.Errorf("--ab %q: %s: an arm sets retrieval.* keys, %s* or %s only", spec, key, rerankKey, armsKey)
		default:
			if err := cfg.Set(path, value); err != nil {
				return cfg, fmt.Errorf("--ab %q: %w", spec, err)
			}
		}
		seen[path] = true
	}
	switch arms {
	case "", "hybrid":
	case "fts":
		cfg.Retrieval.VectorTopK = 0
	case "vector":
		cfg.Retrieval.FTSTopK = 0
	default:
		return cfg, fmt.Errorf("--ab %q: %s=%q: want fts, vector or hybrid", spec, armsKey, arms)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("--ab %q: %w", spec, err)
	}
	return cfg, nil
}

// configured is the configured retrieval.* settings on one line.
func configured(cfg config.Config) string {
	var parts []string
	for line := range strings.Lines(cfg.String()) {
		if kv, ok := strings.CutPrefix(strings.TrimSpace(line), retrievalSection); ok {
			parts = append(parts, strings.Replace(kv, ": ", "=", 1))
		}
	}
	return "configured: " + strings.Join(parts, " ")
}
