package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/vaultask/vaultask/llm/builtin"
)

// Embedder embeds questions and the passages they should find into one
// vector space. A retrieval model may want the two embedded differently
// (its query and document prefixes), so they are asked for apart.
type Embedder interface {
	EmbedQueries(ctx context.Context, texts []string) ([][]float32, error)
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
}

var _ Embedder = (*Embedding)(nil)

// EmbedderOptions configure NewEmbedder.
type EmbedderOptions struct {
	Options
	// Dim is the configured dimension: a model returning another is an
	// error. 0 is the model's own, which vaultask must know (the built-in
	// models and those KnownEmbeddingModel lists).
	Dim int
	// Prefixes replace those the model is known by (KnownEmbeddingModel);
	// nil keeps them, and a model vaultask does not know gets none.
	Prefixes *Prefixes
	// BuiltinDir holds the built-in models' files, each in its folder
	// (builtin.Spec.Dir; or, for one model, its files directly); "" is
	// DefaultBuiltinDir().
	BuiltinDir string
	// Workers is how many goroutines a built-in model computes one call
	// on; 0 is GOMAXPROCS.
	Workers int
}

// rawEmbedder embeds texts as they are given.
type rawEmbedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Embedding is a configured embedding model: the texts it is given are
// prefixed as the model wants before it embeds them, and every vector is
// checked to be of the space's dimension.
type Embedding struct {
	spec EmbeddingSpec
	raw  rawEmbedder
	// background, when not nil, makes the embedder of passages in raw's
	// place, on the first passage: a built-in model's background view
	// (builtin.Backgrounder: e5's, bge's), on threads of the lowest
	// priority, so that embedding the vault never takes the CPU questions
	// and the index's writer want. An embedder that only embeds questions never starts
	// those threads.
	background func() rawEmbedder
	docsOnce   sync.Once
	docs       rawEmbedder
	// typed, when not nil, is a server that prefixes texts itself from the
	// input_type each request names (EmbeddingSpec.InputType).
	typed *Client
}

// EmbeddingSpec is what names an embedding model's vector space: the model,
// the length of its vectors and how questions and passages are told apart
// for it. Vectors of two specs are never comparable.
type EmbeddingSpec struct {
	Model    string
	Dim      int
	Prefixes Prefixes
	// InputType is set when the server prefixes texts itself from the
	// request's input_type (EmbeddingModel.InputType); Prefixes then say
	// so, as "input_type=query" and "input_type=passage", and are never
	// put before a text.
	InputType bool
	// Files names a built-in model's files by their pinned sums
	// (builtin.Spec.Digest), which its Load checks: another release of
	// them is another space. "" for a model behind a server.
	Files string
}

// Input-type markers: the prefixes of a spec whose server prefixes texts
// itself.
const (
	inputTypeQuery   = "input_type=query"
	inputTypePassage = "input_type=passage"
)

// ResolveEmbedding is the spec of model as configured, without loading or
// reaching it: dim 0 takes the model's own, prefixes nil the model's own
// (KnownEmbeddingModel). A model whose dimension vaultask does not know
// needs dim, and the error says so.
func ResolveEmbedding(model string, dim int, prefixes *Prefixes) (EmbeddingSpec, error) {
	id, err := ParseModelID(model)
	if err != nil {
		return EmbeddingSpec{}, err
	}
	known, isKnown := KnownEmbeddingModel(model)
	spec := EmbeddingSpec{Model: model, Dim: dim, Prefixes: known.Prefixes}
	switch {
	case prefixes != nil:
		spec.Prefixes = *prefixes
	case known.InputType:
		spec.InputType, spec.Prefixes = true, Prefixes{Query: inputTypeQuery, Document: inputTypePassage}
	}
	if s := builtinSpec(model); s != nil {
		spec.Files = s.Digest()
	}
	switch {
	case id.Provider == "builtin" && !isKnown:
		return EmbeddingSpec{}, errNotBuiltin(model)
	case id.Provider == "builtin" && dim > 0 && dim != known.Dim:
		return EmbeddingSpec{}, fmt.Errorf("embedding model %s has %d dimensions, and %d are configured (models.embedding_dim: 0 takes the model's own)", model, known.Dim, dim)
	case dim > 0:
	case known.Dim > 0:
		spec.Dim = known.Dim
	case isKnown:
		return EmbeddingSpec{}, fmt.Errorf("embedding model %s comes in several sizes: set models.embedding_dim to the length of its vectors", model)
	default:
		return EmbeddingSpec{}, fmt.Errorf("embedding model %s is not one vaultask knows: set models.embedding_dim to the length of its vectors (and models.embedding_query_prefix and models.embedding_document_prefix if it wants them)", model)
	}
	return spec, nil
}

// NewEmbedder returns the embedder for model: a built-in one for the id of
// a built-in model (builtinModels), else an OpenAI-compatible client
// (Ollama, or the operator's own server at BaseURL). Hosted APIs are
// refused, since every note, personal ones included, is embedded.
func NewEmbedder(model string, opts EmbedderOptions) (*Embedding, error) {
	if err := CheckLocalEmbedding(model, opts.BaseURL); err != nil {
		return nil, err
	}
	spec, err := ResolveEmbedding(model, opts.Dim, opts.Prefixes)
	if err != nil {
		return nil, err
	}
	e := &Embedding{spec: spec}
	if id, _ := ParseModelID(model); id.Provider == "builtin" {
		m, err := loadBuiltin(model, opts.BuiltinDir, opts.Workers)
		if err != nil {
			return nil, err
		}
		if m.Dim() != spec.Dim {
			m.Close()
			return nil, fmt.Errorf("embedding model %s loaded with %d dimensions, not its %d", model, m.Dim(), spec.Dim)
		}
		e.raw = m
		if b, ok := m.(builtin.Backgrounder); ok {
			e.background = func() rawEmbedder { return b.Background() }
		}
		return e, nil
	}
	c, err := NewClient(model, opts.Options)
	if err != nil {
		return nil, err
	}
	e.raw = c
	if spec.InputType {
		e.typed = c
	}
	return e, nil
}

// Spec names the embedding model's vector space.
func (e *Embedding) Spec() EmbeddingSpec { return e.spec }

// EmbedQueries embeds questions.
func (e *Embedding) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, e.raw, texts, e.spec.Prefixes.Query, "query")
}

// EmbedDocuments embeds passages to be found.
func (e *Embedding) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, e.passages(), texts, e.spec.Prefixes.Document, "passage")
}

// passages is the embedder of passages: the background view, started on
// the first call, when the model has one.
func (e *Embedding) passages() rawEmbedder {
	if e.background == nil {
		return e.raw
	}
	e.docsOnce.Do(func() { e.docs = e.background() })
	return e.docs
}

// Close releases what a built-in model holds: the background view's
// threads, then the open model file. The Embedding must not be used
// afterwards. It is a no-op for a model behind a server.
func (e *Embedding) Close() error {
	e.docsOnce.Do(func() {}) // no background view starts after Close
	var errs []error
	for _, r := range []rawEmbedder{e.docs, e.raw} {
		if c, ok := r.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

func (e *Embedding) embed(ctx context.Context, raw rawEmbedder, texts []string, prefix, inputType string) ([][]float32, error) {
	var vs [][]float32
	var err error
	switch {
	case e.typed != nil:
		vs, err = e.typed.embed(ctx, texts, inputType)
	case prefix != "":
		prefixed := make([]string, len(texts))
		for i, t := range texts {
			prefixed[i] = prefix + t
		}
		vs, err = raw.Embed(ctx, prefixed)
	default:
		vs, err = raw.Embed(ctx, texts)
	}
	if err != nil {
		return nil, err
	}
	// Vectors of the wrong dimension must never reach the index, where
	// they would mix two vector spaces.
	for _, v := range vs {
		if len(v) != e.spec.Dim {
			return nil, fmt.Errorf("embedding model %s returned %d dimensions, and %d are configured", e.spec.Model, len(v), e.spec.Dim)
		}
	}
	return vs, nil
}
