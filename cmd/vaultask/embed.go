package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

var _ vectorizer.Embedder = llm.Embedder(nil)

// embeddingSpace is the space of the configured embedding model: the one the
// index embeds into (and re-embeds into when it holds another). A model
// whose dimension vaultask does not know, without models.embedding_dim, is
// an error naming the setting.
func embeddingSpace(cfg config.Config) (vault.EmbeddingSpace, error) {
	spec, err := llm.ResolveEmbedding(cfg.Models.Embedding, cfg.Models.EmbeddingDim, configuredPrefixes(cfg.Models))
	if err != nil {
		return vault.EmbeddingSpace{}, err
	}
	return spaceOf(spec), nil
}

func spaceOf(spec llm.EmbeddingSpec) vault.EmbeddingSpace {
	return vault.EmbeddingSpace{Model: spec.Model, Dim: spec.Dim, QueryPrefix: spec.Prefixes.Query, DocumentPrefix: spec.Prefixes.Document, Files: spec.Files}
}

// configuredPrefixes are the prefixes models.embedding_query_prefix and
// models.embedding_document_prefix set: nil when both are "auto" (the
// model's own), else those set with the model's own in place of "auto".
func configuredPrefixes(m config.Models) *llm.Prefixes {
	if m.EmbeddingQueryPrefix == config.Auto && m.EmbeddingDocumentPrefix == config.Auto {
		return nil
	}
	known, _ := llm.KnownEmbeddingModel(m.Embedding)
	p := known.Prefixes
	if m.EmbeddingQueryPrefix != config.Auto {
		p.Query = m.EmbeddingQueryPrefix
	}
	if m.EmbeddingDocumentPrefix != config.Auto {
		p.Document = m.EmbeddingDocumentPrefix
	}
	return &p
}

// embedder returns the configured embedding model, built once per Main and
// shared: serve's pipeline (query vectors) and its background vectorizer
// (chunk vectors) then hold one copy of the built-in model, not two.
func (m *Main) embedder(cfg config.Config) (*llm.Embedding, error) {
	m.embMu.Lock()
	defer m.embMu.Unlock()
	if m.emb != nil && m.embFor == cfg.Models {
		return m.emb, nil
	}
	e, err := llm.NewEmbedder(cfg.Models.Embedding, llm.EmbedderOptions{
		Options:    llm.Options{BaseURL: cfg.Models.EmbeddingBaseURL, Getenv: m.getenv},
		Dim:        cfg.Models.EmbeddingDim,
		Prefixes:   configuredPrefixes(cfg.Models),
		BuiltinDir: cfg.Models.BuiltinDir,
	})
	if err != nil {
		return nil, err
	}
	m.emb, m.embFor = e, cfg.Models
	m.built = append(m.built, e)
	return e, nil
}

// closeEmbedders releases the embedders the command built (a built-in
// model's threads and open file), once it no longer runs.
func (m *Main) closeEmbedders() {
	m.embMu.Lock()
	defer m.embMu.Unlock()
	for _, e := range m.built {
		_ = e.Close()
	}
	m.built, m.emb, m.active = nil, nil, nil
}

// queryEmbedders are the models a question may be embedded with: the
// configured one, and, while the index re-embeds into its space and still
// searches the space of the model it was built with, that model when it is
// a built-in one (a built-in model needs nothing but its files; another
// would need the configuration that named it). Without one of the space the
// index searches, questions are answered by full text until it switches.
// It returns the errors of the models it could not build.
func (m *Main) queryEmbedders(cfg config.Config, store *index.Store) (rag.Embedders, error) {
	var embs rag.Embedders
	conf, err := m.embedder(cfg)
	if err == nil {
		embs = append(embs, rag.SpaceEmbedder{Texts: conf, Space: spaceOf(conf.Spec())})
	}
	active := store.Search().ActiveSpace()
	if err == nil && spaceOf(conf.Spec()) == active {
		return embs, nil
	}
	old, oldErr := m.activeEmbedder(cfg, active)
	if oldErr == nil {
		embs = append(embs, rag.SpaceEmbedder{Texts: old, Space: active})
	}
	return embs, errors.Join(err, oldErr)
}

// embedsSpace reports whether an embedder the command built embeds in
// space: questions are searched by vector in that space.
func (m *Main) embedsSpace(space vault.EmbeddingSpace) bool {
	m.embMu.Lock()
	defer m.embMu.Unlock()
	for _, e := range m.built {
		if spaceOf(e.Spec()) == space {
			return true
		}
	}
	return false
}

// activeEmbedder is the built-in model of space, the one an index searches
// while it re-embeds into the configured model's, built once per Main and
// shared: it embeds the questions (queryEmbedders) and the notes written
// meanwhile (vectorizerOptions).
func (m *Main) activeEmbedder(cfg config.Config, space vault.EmbeddingSpace) (*llm.Embedding, error) {
	m.embMu.Lock()
	defer m.embMu.Unlock()
	if m.active != nil && m.activeFor == space {
		return m.active, nil
	}
	e, err := builtinOf(cfg, space)
	if err != nil {
		return nil, err
	}
	m.active, m.activeFor = e, space
	m.built = append(m.built, e)
	return e, nil
}

// vectorizerOptions are the background embedder's options for store, whose
// backlog emb embeds: while the index re-embeds into emb's space, the model
// of the space it searches embeds the notes written meanwhile there too,
// when it is a built-in one (see activeEmbedder); without it they are found
// by full text until the switch, as every question is (queryEmbedders).
func (m *Main) vectorizerOptions(cfg config.Config, store *index.Store, emb *llm.Embedding, log *slog.Logger) vectorizer.Options {
	opts := vectorizer.Options{Logger: log}
	if active := store.Search().ActiveSpace(); spaceOf(emb.Spec()) != active {
		if old, err := m.activeEmbedder(cfg, active); err == nil {
			opts.Active = old
		}
	}
	return opts
}

// builtinOf is the built-in model of space, when space is one.
func builtinOf(cfg config.Config, space vault.EmbeddingSpace) (*llm.Embedding, error) {
	if id, err := llm.ParseModelID(space.Model); err != nil || id.Provider != "builtin" {
		return nil, fmt.Errorf("the index searches vectors of %s, which is not a built-in model: questions are answered by full text until it is re-embedded with %s", space, cfg.Models.Embedding)
	}
	e, err := llm.NewEmbedder(space.Model, llm.EmbedderOptions{Dim: space.Dim, BuiltinDir: cfg.Models.BuiltinDir,
		Prefixes: &llm.Prefixes{Query: space.QueryPrefix, Document: space.DocumentPrefix}})
	if err != nil {
		return nil, err
	}
	if spaceOf(e.Spec()) != space {
		_ = e.Close()
		return nil, fmt.Errorf("the built-in model %s embeds in %s, not in the index's %s", space.Model, spaceOf(e.Spec()), space)
	}
	return e, nil
}

// embedBacklog gives every chunk without a vector its vector now, for the
// one-shot commands, showing its progress on stdout (see progressLine).
// When the embedder can't be had, the index stays searchable by full text
// and the backlog waits for the next run or serve.
func (m *Main) embedBacklog(ctx context.Context, cfg config.Config, store *index.Store, log *slog.Logger) error {
	emb, err := m.embedder(cfg)
	if err != nil {
		log.Warn("no embedder: the index is searchable by full text only until the backlog is embedded", keyModel, cfg.Models.Embedding, keyErr, err)
		return nil
	}
	start := m.clock()
	line := newProgressLine(m.Stdout, start)
	var meter rateMeter
	meter.add(start, 0)
	done := 0
	onBatch := func(_ context.Context, n, _ int) {
		done += n
		now := m.clock()
		rate := meter.add(now, done)
		if !line.due(now) {
			return
		}
		waiting, err := store.Vectors().EmbeddingWaiting(ctx)
		if err != nil {
			log.Warn("counting the embedding backlog", keyErr, err)
			return
		}
		line.show(now, embedProgress{done: done, waiting: waiting, rate: rate})
	}
	n, err := vectorizer.New(store.Vectors(), emb, vectorizer.Options{Logger: log, OnBatch: onBatch}).Drain(ctx)
	line.end()
	if err != nil {
		log.Warn("embedding stopped: the rest of the backlog is searchable by full text only until embedded", keyModel, cfg.Models.Embedding, keyEmbedded, n, keyErr, err)
		return nil
	}
	if n > 0 {
		d := m.clock().Sub(start)
		fmt.Fprintf(m.Stdout, "embedded %d chunks with %s in %s (%.0f chunks/s)\n", n, cfg.Models.Embedding, d.Round(time.Millisecond), float64(n)/d.Seconds())
	}
	return nil
}

// startVectorizer embeds the backlog in the background while the follower
// writes notes, logging a long drain (see backlogLog); the returned
// function stops it and waits. Without an embedder the index is full-text
// only, said once.
func (m *Main) startVectorizer(ctx context.Context, cfg config.Config, store *index.Store, log *slog.Logger) (stop func()) {
	emb, err := m.embedder(cfg)
	if err != nil {
		log.Warn("no embedder: new notes are searchable by full text only", keyModel, cfg.Models.Embedding, keyErr, err)
		return func() {}
	}
	bl := &backlogLog{log: log, now: m.clock, waiting: store.Vectors().EmbeddingWaiting}
	opts := m.vectorizerOptions(cfg, store, emb, log)
	opts.OnBatch, opts.OnCaughtUp = bl.batch, func(int, int) { bl.caughtUp() }
	v := vectorizer.New(store.Vectors(), emb, opts)
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
