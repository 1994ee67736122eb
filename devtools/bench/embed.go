package bench

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"log/slog"
	"math"
	"math/rand/v2"

	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/vault"
)

// quiet is the logger of the index and feed the benchmarks open in process.
var quiet = slog.New(slog.DiscardHandler)

// hashEmbedder is a stand-in embedder for measurements that do not depend
// on the vectors' values (file sizes): a unit vector of dim dimensions
// seeded by the text.
type hashEmbedder struct{ dim int }

func (e hashEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = noisy(make([]float32, e.dim), t, 1)
	}
	return out, nil
}

// noisy is base plus Gaussian noise of per-dimension deviation sigma
// seeded by text, normalised.
func noisy(base []float32, text string, sigma float64) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	seed := h.Sum64()
	r := rand.New(rand.NewPCG(seed, seed>>7|1))
	v := make([]float32, len(base))
	var norm float64
	for i := range v {
		x := r.NormFloat64()*sigma + float64(base[i])
		v[i] = float32(x)
		norm += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

// poolEmbedder gives each text a real vector of the built-in model being
// measured for one of a pool of generated passages, chosen by the text's
// hash, plus a little noise: the scale indexes get the model's distribution
// of vectors (clusters included) without embedding 300k chunks, which takes
// USE-lite half an hour on this machine. Their search cost does not depend on which
// vector a chunk has; their relevance is not measured here.
type poolEmbedder struct{ pool [][]float32 }

func (p poolEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		out[i] = noisy(p.pool[h.Sum64()%uint64(len(p.pool))], t, 0.02)
	}
	return out, nil
}

func encodeVectors(vs [][]float32) []byte {
	var b []byte
	for _, v := range vs {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	return b
}

func decodeVectors(b []byte, dim int) [][]float32 {
	out := make([][]float32, len(b)/(4*dim))
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[(i*dim+j)*4:]))
		}
		out[i] = v
	}
	return out
}

// queryVectors embeds qs with emb, each tagged with its space, as the
// pipeline's embedder tags a question.
func queryVectors(ctx context.Context, emb rag.TextEmbedder, space vault.EmbeddingSpace, qs []string) ([]vault.QueryVector, error) {
	vs, err := emb.EmbedQueries(ctx, qs)
	if err != nil {
		return nil, err
	}
	out := make([]vault.QueryVector, len(vs))
	for i, v := range vs {
		out[i] = vault.QueryVector{Space: space, Values: v}
	}
	return out, nil
}
