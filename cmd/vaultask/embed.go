package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/vectorizer"
)

var _ vectorizer.Embedder = llm.Embedder(nil)

// embedder returns the configured embedding model, built once per Main and
// shared: serve's pipeline (query vectors) and its background vectorizer
// (chunk vectors) then hold one copy of the built-in model, not two.
func (m *Main) embedder(cfg config.Config) (llm.Embedder, error) {
	m.embMu.Lock()
	defer m.embMu.Unlock()
	if m.emb != nil && m.embFor == cfg.Models {
		return m.emb, nil
	}
	e, err := newEmbedder(cfg, m.getenv)
	if err != nil {
		return nil, err
	}
	m.emb, m.embFor = e, cfg.Models
	return e, nil
}

// newEmbedder builds the configured embedding model.
func newEmbedder(cfg config.Config, env func(string) string) (llm.Embedder, error) {
	return llm.NewEmbedder(cfg.Models.Embedding, llm.EmbedderOptions{
		Options:    llm.Options{BaseURL: cfg.Models.EmbeddingBaseURL, Getenv: env},
		Dim:        cfg.Models.EmbeddingDim,
		BuiltinDir: cfg.Models.BuiltinDir,
	})
}

// embedBacklog gives every chunk without a vector its vector now, for the
// one-shot commands. When the embedder can't be had, the index stays
// searchable by full text and the backlog waits for the next run or serve.
func (m *Main) embedBacklog(ctx context.Context, cfg config.Config, store *index.Store, log *slog.Logger) error {
	emb, err := m.embedder(cfg)
	if err != nil {
		log.Warn("no embedder: the index is searchable by full text only until the backlog is embedded", keyModel, cfg.Models.Embedding, keyErr, err)
		return nil
	}
	start := time.Now()
	n, err := vectorizer.New(store, emb, vectorizer.Options{Logger: log}).Drain(ctx)
	if err != nil {
		log.Warn("embedding stopped: the rest of the backlog is searchable by full text only until embedded", keyModel, cfg.Models.Embedding, keyEmbedded, n, keyErr, err)
		return nil
	}
	if n > 0 {
		d := time.Since(start)
		fmt.Fprintf(m.Stdout, "embedded %d chunks with %s in %s (%.0f chunks/s)\n", n, cfg.Models.Embedding, d.Round(time.Millisecond), float64(n)/d.Seconds())
	}
	return nil
}

// startVectorizer embeds the backlog in the background while the follower
// writes notes; the returned function stops it and waits. Without an
// embedder the index is full-text only, said once.
func (m *Main) startVectorizer(ctx context.Context, cfg config.Config, store *index.Store, log *slog.Logger) (stop func()) {
	emb, err := m.embedder(cfg)
	if err != nil {
		log.Warn("no embedder: new notes are searchable by full text only", keyModel, cfg.Models.Embedding, keyErr, err)
		return func() {}
	}
	v := vectorizer.New(store, emb, vectorizer.Options{Logger: log})
	if err := v.Open(ctx); err != nil {
		log.Warn("embedding not started: new notes are searchable by full text only", keyErr, err)
		return func() {}
	}
	return func() {
		if err := v.Close(context.WithoutCancel(ctx)); err != nil {
			log.Warn("stopping the vectorizer", keyErr, err)
		}
	}
}
