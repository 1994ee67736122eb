package rag

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/vaultask/vaultask/vault"
)

// Searcher is the index as the pipeline reads it; *index.Search implements
// it. Every method takes the request's scope and applies it inside its
// query, before any k or limit.
type Searcher interface {
	// SearchVector, DistanceBounds and NearestChunks compare q with the
	// vectors of q's embedding space only, and refuse one the index does
	// not search.
	SearchVector(ctx context.Context, q vault.QueryVector, k int, scope vault.Scope) ([]vault.Chunk, error)
	SearchFTS(ctx context.Context, text string, k int, scope vault.Scope, w vault.FieldWeights) ([]vault.Chunk, error)
	Docs(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Doc, error)
	// Hops reads the notes one hop from each of docIDs, by doc id alone:
	// expansion reads only the notes it may keep.
	Hops(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Hop, error)
	// DistanceBounds bounds the distance of each note's chunk nearest q,
	// cheaply, for the notes it can: expansion reads exactly only those
	// that may be among the nearest it keeps (see expansionReads).
	DistanceBounds(ctx context.Context, docIDs []string, q vault.QueryVector, scope vault.Scope) (map[string]vault.DistanceBounds, error)
	// NearestChunks reads each note's chunk nearest q (its first without
	// a vector or without vectors), with the distances of those that have one:
	// what expandHits takes of the notes it reaches.
	NearestChunks(ctx context.Context, docIDs []string, q vault.QueryVector, scope vault.Scope) ([]vault.Chunk, map[int64]float64, error)
	ResolveLinks(ctx context.Context, links []string, scope vault.Scope) (map[string]vault.Doc, error)
	TermCounter
	// ActiveSpace is the embedding space the index searches: a query
	// vector must be of it. It changes when an index re-embedded with a
	// new model switches to it.
	ActiveSpace() vault.EmbeddingSpace
}

// Embedder embeds a question in an embedding space, the one the index
// searches, and tags the vector with it (Embedders holds a model of each
// space there is one of); ErrNoSpaceEmbedder when it has no model of it.
type Embedder interface {
	EmbedQuery(ctx context.Context, space vault.EmbeddingSpace, text string) (vault.QueryVector, error)
}

// Options wire a Pipeline. Searcher is required; every other dependency is
// optional and its absence is a documented degradation.
type Options struct {
	Searcher Searcher
	// Embedder embeds queries; nil means full-text search only.
	Embedder Embedder
	// Generator answers and rewrites multi-turn questions; nil means
	// extractive answers and rewrites by concatenation.
	Generator ChatModel
	// NoVerdict does not ask the generation model for its verdict on the
	// passages (verdictRule): the coverage judgement alone decides the web
	// search and the silent answer, for a model too small to judge.
	NoVerdict bool
	// Reranker re-scores candidates; nil means no rerank.
	Reranker *Reranker
	// Web searches the web. Set it only when web search is enabled: the
	// pipeline never searches without one, nor for a request without
	// AllowWeb.
	Web      WebSearcher
	Settings Settings
	// Limits bound a question's size; the zero value is the defaults.
	Limits Limits
	// IndexState says how complete the index is, for the coverage
	// judgement; nil means complete.
	IndexState func(ctx context.Context, scope vault.Scope) IndexState
	// ModelTimeout bounds a rewrite; default 20s. A rerank has its own
	// budget (RerankOptions), the answer the caller's context.
	ModelTimeout time.Duration
	Logger       *slog.Logger
}

// Pipeline answers questions: retrieve, expand, rerank, assemble, answer.
// It holds no per-request state and is safe for concurrent use.
type Pipeline struct {
	opts Options
	log  *slog.Logger
}

// New returns a pipeline; it checks that the settings can give an answer.
func New(opts Options) (*Pipeline, error) {
	if opts.Searcher == nil {
		return nil, errors.New("rag: no searcher")
	}
	if err := opts.Settings.validate(); err != nil {
		return nil, err
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.ModelTimeout <= 0 {
		opts.ModelTimeout = 20 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Pipeline{opts: opts, log: opts.Logger.With(logComponent, "rag")}, nil
}

// Settings are the pipeline's sizes.
func (p *Pipeline) Settings() Settings { return p.opts.Settings }

// WithSettings returns a pipeline like p with other sizes, for an A/B
// evaluation.
func (p *Pipeline) WithSettings(s Settings) (*Pipeline, error) {
	opts := p.opts
	opts.Settings = s
	return New(opts)
}

// WithReranker returns a pipeline like p that reranks with r (nil: no
// rerank), for an A/B evaluation of a rerank model.
func (p *Pipeline) WithReranker(r *Reranker) *Pipeline {
	out := *p
	out.opts.Reranker = r
	return &out
}
