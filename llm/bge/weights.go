package bge

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/internal/simd"
	"github.com/vaultask/vaultask/llm/internal/bert"
)

// The shape of bge-small-en-v1.5; a file of another shape is refused.
const (
	layers = 12
	hidden = 384
	heads  = 12
	ffn    = 1536
	vocab  = 30522
	maxPos = 512
	eps    = 1e-12
)

// weightsReader builds the encoder's weights from the ONNX graph. The
// export names the biases and LayerNorms after the PyTorch modules but not
// the matrices (onnx::MatMul_1525 …), so a matrix is found through the
// graph: the MatMul whose output the Add with its bias takes.
type weightsReader struct {
	g        *onnxGraph
	producer map[string]*onnxNode // a node by each of its outputs
	addOf    map[string]*onnxNode // an Add node by each initializer it takes
}

func newWeightsReader(g *onnxGraph) *weightsReader {
	r := &weightsReader{g: g, producer: map[string]*onnxNode{}, addOf: map[string]*onnxNode{}}
	for i := range g.nodes {
		n := &g.nodes[i]
		for _, o := range n.outputs {
			r.producer[o] = n
		}
		if n.op == "Add" {
			for _, in := range n.inputs {
				if _, ok := g.inits[in]; ok {
					r.addOf[in] = n
				}
			}
		}
	}
	return r
}

// tensor returns the fp32 data of the initializer name, checking its
// shape.
func (r *weightsReader) tensor(name string, dims ...int) ([]byte, error) {
	t, ok := r.g.inits[name]
	if !ok {
		return nil, fmt.Errorf("%w: no tensor %s: not a bge-small-en-v1.5 export", errFormat, name)
	}
	if !slices.Equal(t.dims, dims) {
		return nil, fmt.Errorf("%w: %s is %v, bge-small-en-v1.5's is %v", errFormat, name, t.dims, dims)
	}
	if t.external {
		return nil, fmt.Errorf("%w: %s is stored outside the file (external data is not supported)", errFormat, name)
	}
	if t.dataType != onnxFloat {
		return nil, fmt.Errorf("%w: %s has ONNX data type %d, not float (1)", errFormat, name, t.dataType)
	}
	if n := 4 * prod(dims); len(t.data) != n {
		return nil, fmt.Errorf("%w: %s holds %d bytes, %v floats need %d", errFormat, name, len(t.data), dims, n)
	}
	return t.data, nil
}

func (r *weightsReader) f32(name string, dims ...int) ([]float32, error) {
	b, err := r.tensor(name, dims...)
	if err != nil {
		return nil, err
	}
	return decodeF32(b), nil
}

// matrix returns, as rows×cols (y = x·Wᵀ), the weights of the MatMul that
// feeds the Add taking bias; the export stores them cols×rows.
func (r *weightsReader) matrix(bias string, rows, cols int) ([]float32, error) {
	add := r.addOf[bias]
	if add == nil || len(add.inputs) != 2 {
		return nil, fmt.Errorf("%w: no Add node takes %s", errFormat, bias)
	}
	x := add.inputs[0]
	if x == bias {
		x = add.inputs[1]
	}
	mm := r.producer[x]
	if mm == nil || mm.op != "MatMul" || len(mm.inputs) != 2 {
		return nil, fmt.Errorf("%w: the Add taking %s does not take a MatMul's output", errFormat, bias)
	}
	b, err := r.tensor(mm.inputs[1], cols, rows)
	if err != nil {
		return nil, fmt.Errorf("the matrix of %s: %w", bias, err)
	}
	w := make([]float32, rows*cols)
	for i := range cols {
		for o := range rows {
			w[o*cols+i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*(i*rows+o):]))
		}
	}
	return w, nil
}

// weights reads the whole encoder. The word table stays in the file,
// whose bytes are data (the mapping Load parses) and whose rows are read
// from rows once loaded.
func (r *weightsReader) weights(data []byte, rows io.ReaderAt) (bert.Weights, error) {
	if n := r.layerCount(); n != layers {
		return bert.Weights{}, fmt.Errorf("%w: %d encoder layers, bge-small-en-v1.5 has %d", errFormat, n, layers)
	}
	word, err := r.tensor("embeddings.word_embeddings.weight", vocab, hidden)
	if err != nil {
		return bert.Weights{}, err
	}
	w := bert.Weights{Words: wordTable{rows: rows, off: modelfile.Offset(data, word)}.read}
	if w.Pos, err = r.f32("embeddings.position_embeddings.weight", maxPos, hidden); err != nil {
		return w, err
	}
	if w.Type, err = r.f32("embeddings.token_type_embeddings.weight", 2, hidden); err != nil {
		return w, err
	}
	w.Type = w.Type[:hidden]
	if w.LnW, err = r.f32("embeddings.LayerNorm.weight", hidden); err != nil {
		return w, err
	}
	if w.LnB, err = r.f32("embeddings.LayerNorm.bias", hidden); err != nil {
		return w, err
	}
	w.Layers = make([]bert.Layer, layers)
	for l := range w.Layers {
		if err := r.layer(l, &w.Layers[l]); err != nil {
			return w, err
		}
	}
	return w, nil
}

// layerCount is one more than the highest n of the encoder.layer.n.
// tensors.
func (r *weightsReader) layerCount() int {
	n := 0
	for name := range r.g.inits {
		rest, ok := strings.CutPrefix(name, "encoder.layer.")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		if l, err := strconv.Atoi(num); err == nil && l >= n {
			n = l + 1
		}
	}
	return n
}

// layer reads layer l and quantizes its matrices to int8 (the query, key
// and value ones as one matrix of 3·hidden rows).
func (r *weightsReader) layer(l int, ly *bert.Layer) error {
	p := "encoder.layer." + strconv.Itoa(l) + "."
	var qkv []float32
	for _, m := range []string{"query", "key", "value"} {
		bias := p + "attention.self." + m + ".bias"
		w, err := r.matrix(bias, hidden, hidden)
		if err != nil {
			return err
		}
		qkv = append(qkv, w...)
		b, err := r.f32(bias, hidden)
		if err != nil {
			return err
		}
		ly.QKVB = append(ly.QKVB, b...)
	}
	var err error
	if ly.QKV, err = quantize(qkv, 3*hidden, hidden); err != nil {
		return fmt.Errorf("%squery-key-value: %w", p, err)
	}
	mats := []struct {
		name       string
		rows, cols int
		w          *bert.Linear
		b          *[]float32
	}{
		{"attention.output.dense", hidden, hidden, &ly.AttnOut, &ly.AttnOutB},
		{"intermediate.dense", ffn, hidden, &ly.Inter, &ly.InterB},
		{"output.dense", hidden, ffn, &ly.Out, &ly.OutB},
	}
	for _, m := range mats {
		w, err := r.matrix(p+m.name+".bias", m.rows, m.cols)
		if err != nil {
			return err
		}
		if *m.w, err = quantize(w, m.rows, m.cols); err != nil {
			return fmt.Errorf("%s%s: %w", p, m.name, err)
		}
		if *m.b, err = r.f32(p+m.name+".bias", m.rows); err != nil {
			return err
		}
	}
	norms := []struct {
		name string
		dst  *[]float32
	}{
		{"attention.output.LayerNorm.weight", &ly.AttnLnW}, {"attention.output.LayerNorm.bias", &ly.AttnLnB},
		{"output.LayerNorm.weight", &ly.OutLnW}, {"output.LayerNorm.bias", &ly.OutLnB},
	}
	for _, n := range norms {
		if *n.dst, err = r.f32(p+n.name, hidden); err != nil {
			return err
		}
	}
	return nil
}

// wordTable is the fp32 word embeddings, vocab rows of hidden values, at
// off in the model file.
type wordTable struct {
	rows io.ReaderAt
	off  int64
}

const rowBytes = hidden * 4

func (t wordTable) read(dst []float32, ids []int32) error {
	row := make([]byte, rowBytes)
	for i, id := range ids {
		if _, err := t.rows.ReadAt(row, t.off+int64(id)*rowBytes); err != nil {
			return fmt.Errorf("the word embedding of token %d: %w", id, err)
		}
		for j := range hidden {
			dst[i*hidden+j] = math.Float32frombits(binary.LittleEndian.Uint32(row[4*j:]))
		}
	}
	return nil
}

func quantize(w []float32, rows, cols int) (bert.Linear, error) {
	q, err := simd.QuantizeW8(w, rows, cols)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFormat, err)
	}
	return bert.W8(q), nil
}

func decodeF32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func prod(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}
