package rag

import (
	"context"
	"errors"
	"fmt"

	"github.com/vaultask/vaultask/vault"
)

// TextEmbedder embeds questions, one vector per text, in order, as an
// embedding model wants questions embedded (its query prefix): an
// embedding model as llm serves it.
type TextEmbedder interface {
	EmbedQueries(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrNoSpaceEmbedder is an Embedder asked for a space it has no model of:
// the index searches a space no configured model embeds into (it is being
// re-embedded with the configured one, and the old model is not at hand).
// The question is then answered by full text.
var ErrNoSpaceEmbedder = errors.New("no embedding model of the space the index searches")

// SpaceEmbedder is the Embedder of one embedding space: Texts embeds the
// question, and the vector is tagged with Space, the space Texts embeds in.
type SpaceEmbedder struct {
	Texts TextEmbedder
	Space vault.EmbeddingSpace
}

// EmbedQuery embeds text in e.Space, which space must be.
func (e SpaceEmbedder) EmbedQuery(ctx context.Context, space vault.EmbeddingSpace, text string) (vault.QueryVector, error) {
	if space != e.Space {
		return vault.QueryVector{}, fmt.Errorf("%w: the index searches %s, the model at hand embeds in %s", ErrNoSpaceEmbedder, space, e.Space)
	}
	vs, err := e.Texts.EmbedQueries(ctx, []string{text})
	if err != nil {
		return vault.QueryVector{}, err
	}
	if len(vs) != 1 {
		return vault.QueryVector{}, fmt.Errorf("embedder returned %d vectors for one query", len(vs))
	}
	return vault.QueryVector{Space: e.Space, Values: vs[0]}, nil
}

// Embedders are the embedders of several spaces: while the index re-embeds
// with the configured model, it searches the space of the model it was
// built with, and a question is embedded by that model when it is at hand
// (a built-in one always is), until the index switches to the new space.
type Embedders []SpaceEmbedder

// EmbedQuery embeds text with the embedder of space.
func (es Embedders) EmbedQuery(ctx context.Context, space vault.EmbeddingSpace, text string) (vault.QueryVector, error) {
	for _, e := range es {
		if e.Space == space {
			return e.EmbedQuery(ctx, space, text)
		}
	}
	return vault.QueryVector{}, fmt.Errorf("%w: the index searches %s", ErrNoSpaceEmbedder, space)
}
