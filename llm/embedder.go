package llm

import (
	"context"
	"fmt"

	"github.com/vaultask/vaultask/llm/uselite"
)

// Embedder turns texts into vectors, one per text, in order.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedderOptions configure NewEmbedder.
type EmbedderOptions struct {
	Options
	// Dim is the configured dimension; a model returning another is an error.
	Dim int
	// BuiltinDir holds the built-in model's files; "" is uselite.DefaultDir().
	BuiltinDir string
}

// NewEmbedder returns the embedder for model: the built-in USE-lite for
// "builtin/use-lite", else an OpenAI-compatible client (Ollama, or the
// operator's own server at BaseURL). Hosted APIs are refused, since every
// note, personal ones included, is embedded.
func NewEmbedder(model string, opts EmbedderOptions) (Embedder, error) {
	if err := CheckLocalEmbedding(model, opts.BaseURL); err != nil {
		return nil, err
	}
	id, _ := ParseModelID(model)
	var e Embedder
	if id.Provider == "builtin" {
		if model != uselite.ModelID {
			return nil, fmt.Errorf("%w %q: the built-in embedder is %s", ErrBadModelID, model, uselite.ModelID)
		}
		dir := opts.BuiltinDir
		if dir == "" {
			dir = uselite.DefaultDir()
		}
		m, err := uselite.Load(dir)
		if err != nil {
			return nil, err
		}
		e = m
	} else {
		c, err := NewClient(model, opts.Options)
		if err != nil {
			return nil, err
		}
		e = c
	}
	return dimChecked{e: e, model: model, dim: opts.Dim}, nil
}

// dimChecked refuses vectors of the wrong dimension before they can reach
// the index, where they would mix two vector spaces.
type dimChecked struct {
	e     Embedder
	model string
	dim   int
}

func (d dimChecked) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := d.e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		if d.dim > 0 && len(v) != d.dim {
			return nil, fmt.Errorf("embedding model %s returned %d dimensions, and %d are configured", d.model, len(v), d.dim)
		}
	}
	return vs, nil
}
