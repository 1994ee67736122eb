package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/llm/internal/bert"
)

// Encoder is a built-in model run on llm/internal/bert's encoder (e5's and
// bge's): its tokenizer, the encoder, and the model file whose word table
// the encoder reads a row at a time (internal/modelfile). It is safe for
// concurrent use; concurrent calls each use their own scratch.
type Encoder struct {
	tokenize func(text string) []int
	enc      *bert.Encoder
	// file is the model file, nil for a model built from bytes in
	// memory; spec and dir say how to fetch it again.
	file *modelfile.File
	spec *Spec
	dir  string
	// background is set on a Background view, which shares file.
	background bool
}

// NewEncoder is the model run on enc, its texts tokenized by tokenize into
// their content ids (without the ids enc puts around each window).
// OpenEncoder gives it its file.
func NewEncoder(enc *bert.Encoder, tokenize func(text string) []int) *Encoder {
	return &Encoder{tokenize: tokenize, enc: enc}
}

// OpenEncoder loads the model that parse reads from the file name in dir:
// the file's bytes are mapped for parse while the file is hashed beside
// it, and unmapped after (parse keeps no slice of data: the rows the
// encoder reads afterwards it reads from rows, the same file). A file that
// does not match its pinned sum, or changed while it loaded, fails the
// load whatever parse returned (LoadError).
func (s *Spec) OpenEncoder(dir, name string, parse func(data []byte, rows io.ReaderAt) (*Encoder, error)) (*Encoder, error) {
	f, err := s.Sums.Open(dir, name)
	if err != nil {
		return nil, s.LoadError(dir, name, err)
	}
	var m *Encoder
	err = f.Load(func(data []byte) (err error) {
		m, err = parse(data, f)
		return err
	})
	if err != nil {
		f.Close()
		return nil, s.LoadError(dir, name, err)
	}
	m.file, m.spec, m.dir = f, s, dir
	return m, nil
}

// Background is the model as a background embedder runs it: the same
// weights, its work spread over as many threads of the lowest priority
// (internal/lowprio), so that it takes only the CPU nothing else wants.
// Close it before the model.
func (m *Encoder) Background() Model {
	return &Encoder{tokenize: m.tokenize, enc: m.enc.Background(), file: m.file, spec: m.spec, dir: m.dir, background: true}
}

// Close closes the model file, or stops a Background view's threads. The
// model must not be used afterwards.
func (m *Encoder) Close() error {
	switch {
	case m.background:
		m.enc.Close()
	case m.file != nil:
		return m.file.Close()
	}
	return nil
}

// Dim returns the embedding dimension.
func (m *Encoder) Dim() int { return m.enc.Hidden }

// MaxTokens returns the tokens one window holds, the ids around it
// included; a text with more is embedded as the encoder's pooling says
// (bert.Mean: in windows; bert.CLS: by its first).
func (m *Encoder) MaxTokens() int { return m.enc.MaxPos }

// Tokenize returns the content ids text is fed as, before any windowing,
// for the text as given (no prefix is added).
func (m *Encoder) Tokenize(text string) []int { return m.tokenize(text) }

// TokenCount returns the tokens text is fed as, the two around it
// included and before any windowing, for the text as given.
func (m *Encoder) TokenCount(text string) int { return len(m.tokenize(text)) + 2 }

// Embed returns the L2-normalized embedding of each text AS GIVEN: the
// caller puts the model's prefix before it. It returns ctx's error once
// ctx is done, checked between layers. A model file rewritten in place
// since the load fails the call (modelfile.ErrChanged) until it is the
// pinned file again, and is then read from anew.
func (m *Encoder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ids := make([][]int, len(texts))
	for i, text := range texts {
		ids[i] = m.tokenize(text)
	}
	var vecs [][]float32
	err := m.file.Guard(func() (err error) {
		vecs, err = m.enc.Embed(ctx, ids)
		return err
	})
	if errors.Is(err, modelfile.ErrChanged) {
		return nil, fmt.Errorf("%s: %w (run %s to fetch it again; it is read from once it matches)", m.spec.Name, err, m.spec.FetchCommand(m.dir))
	}
	return vecs, err
}
