package rag

import (
	"context"
	"fmt"

	"github.com/vaultask/vaultask/vault"
)

// TextEmbedder embeds texts, one vector per text, in order: an embedding
// model as llm serves it.
type TextEmbedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// SpaceEmbedder is the Embedder of one embedding space: Texts embeds the
// question, and the vector is tagged with Space, the space Texts embeds in.
type SpaceEmbedder struct {
	Texts TextEmbedder
	Space vault.EmbeddingSpace
}

// EmbedQuery embeds text in e.Space.
func (e SpaceEmbedder) EmbedQuery(ctx context.Context, text string) (vault.QueryVector, error) {
	vs, err := e.Texts.Embed(ctx, []string{text})
	if err != nil {
		return vault.QueryVector{}, err
	}
	if len(vs) != 1 {
		return vault.QueryVector{}, fmt.Errorf("embedder returned %d vectors for one query", len(vs))
	}
	return vault.QueryVector{Space: e.Space, Values: vs[0]}, nil
}
