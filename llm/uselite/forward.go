package uselite

import (
	"math"

	"github.com/vaultask/vaultask/internal/simd"
)

// maxGroupTokens bounds the tokens of the windows one worker stacks into one
// forward pass. Every dense layer works per token, so stacking turns it into
// one matrix product over all of them; attention stays per window.
const maxGroupTokens = 256

// workspace is one worker's buffers for forward, reused across calls.
type workspace struct {
	x, h, y      []float32 // maxGroupTokens × Dim
	wide         []float32 // maxGroupTokens × ffnDim
	scores       []float32 // maxTokens × maxTokens: one head's attention
	keys, values []float32 // one head's Kᵀ and V, packed
	pooled       []float32 // maxGroupTokens × Dim: one row per window
	tiles        simd.Tiles
}

func (m *Model) newWorkspace() *workspace {
	rows := maxGroupTokens * Dim
	head := simd.PackedLen(maxTokens, maxTokens, m.kern.NR)
	return &workspace{
		x: make([]float32, rows), h: make([]float32, rows), y: make([]float32, rows),
		wide:   make([]float32, maxGroupTokens*ffnDim),
		scores: make([]float32, maxTokens*maxTokens),
		keys:   make([]float32, head), values: make([]float32, head),
		pooled: make([]float32, rows),
		tiles:  simd.NewTiles(ffnDim, m.kern.NR),
	}
}

// forward writes into out[i] the unit vector of window wins[i], for at most
// maxGroupTokens tokens in all, each window at most maxTokens long.
func (m *Model) forward(ws *workspace, wins [][]int, out [][]float32) {
	n := 0
	for _, w := range wins {
		n += len(w)
	}
	x := ws.x[:n*Dim]
	if n > 0 {
		m.encode(ws, wins, n)
	}

	// Mean over each window's tokens; an empty window pools to zeros, as the
	// graph divides by max(length, 1).
	pooled := ws.pooled[:len(wins)*Dim]
	clear(pooled)
	t := 0
	for i, w := range wins {
		p := pooled[i*Dim : (i+1)*Dim]
		for range w {
			for c, v := range x[t*Dim : (t+1)*Dim] {
				p[c] += v
			}
			t++
		}
		if len(w) > 0 {
			inv := 1 / float32(len(w))
			for c := range p {
				p[c] *= inv
			}
		}
	}
	hid := ws.y[:len(wins)*Dim]
	m.dense(ws, len(wins), pooled, Dim, m.tanh, hid, nil)
	for i := range wins {
		o := out[i]
		for c, v := range hid[i*Dim : (i+1)*Dim] {
			o[c] = float32(math.Tanh(float64(v)))
		}
		normalize(o)
	}
}

// encode runs the two transformer layers over the n tokens of wins and
// leaves their output in ws.x (n × Dim).
func (m *Model) encode(ws *workspace, wins [][]int, n int) {
	// Layer 0's input is 2·embedding + timing signal: the graph adds the
	// timing signal to the embeddings and then adds the embeddings again.
	// It goes in the right half of x; the left half takes the attention, so
	// that the output projection and the dense residual are one product.
	x := ws.x[:n*Dim]
	t := 0
	for _, w := range wins {
		for pos, id := range w {
			row := x[t*Dim+embedDim : (t+1)*Dim]
			emb := m.embed[id*embedDim : (id+1)*embedDim]
			ts := m.timing[pos*embedDim : (pos+1)*embedDim]
			for i := range row {
				row[i] = 2*emb[i] + ts[i]
			}
			t++
		}
	}
	L := &m.layers[0]
	h := ws.h[:n*embedDim]
	L.attnNorm.apply(n, x[embedDim:], Dim, h, embedDim)
	qkv := ws.wide[:n*3*embedDim]
	m.dense(ws, n, h, embedDim, L.qkv, qkv, nil)
	m.attention(ws, wins, qkv, embedDim, x, Dim)
	y := ws.y[:n*Dim]
	m.dense(ws, n, x, Dim, L.out, y, nil)
	m.feedForward(ws, n, L, y, x)

	L = &m.layers[1]
	h = ws.h[:n*Dim]
	L.attnNorm.apply(n, x, Dim, h, Dim)
	qkv = ws.wide[:n*3*Dim]
	m.dense(ws, n, h, Dim, L.qkv, qkv, nil)
	m.attention(ws, wins, qkv, Dim, h, Dim)
	m.dense(ws, n, h, Dim, L.out, y, x)
	m.feedForward(ws, n, L, y, x)
}

// dense sets c (rows of l.w.Cols() floats, back to back) to a·l.w + l.bias, plus
// residual when it is not nil, through a ReLU when l.relu is set.
func (m *Model) dense(ws *workspace, rows int, a []float32, lda int, l linear, c, residual []float32) {
	width := l.w.Cols()
	for r := range rows {
		cr := c[r*width : (r+1)*width]
		if residual != nil {
			for j, b := range l.bias {
				cr[j] = residual[r*width+j] + b
			}
		} else {
			copy(cr, l.bias)
		}
	}
	m.kern.Gemm(rows, a, lda, l.w, c, width, l.relu, ws.tiles)
}

// feedForward sets dst to y + FFN(LayerNorm(y)), FFN being
// dense+ReLU → dense.
func (m *Model) feedForward(ws *workspace, n int, L *layer, y, dst []float32) {
	h := ws.h[:n*Dim]
	L.ffnNorm.apply(n, y, Dim, h, Dim)
	f := ws.wide[:n*ffnDim]
	m.dense(ws, n, h, Dim, L.ffn1, f, nil)
	m.dense(ws, n, f, ffnDim, L.ffn2, dst[:n*Dim], y)
}

// attention computes multi-head self-attention within each window from the
// rows of qkv ([q | k | v], each width wide, queries pre-scaled) and writes
// each window's result into dst (row stride ldd, columns 0:width).
func (m *Model) attention(ws *workspace, wins [][]int, qkv []float32, width int, dst []float32, ldd int) {
	ldq := 3 * width
	dh := width / numHeads
	t := 0
	for _, w := range wins {
		n := len(w)
		if n == 0 {
			continue
		}
		for hd := range numHeads {
			q := qkv[t*ldq+hd*dh:]
			keys := m.kern.PackCols(ws.keys, qkv[t*ldq+width+hd*dh:], ldq, dh, n)
			s := ws.scores[:n*n]
			clear(s)
			m.kern.Gemm(n, q, ldq, keys, s, n, false, ws.tiles)
			softmaxRows(s, n)
			values := m.kern.PackRows(ws.values, qkv[t*ldq+2*width+hd*dh:], ldq, n, dh)
			o := dst[t*ldd+hd*dh:]
			for r := range n {
				clear(o[r*ldd : r*ldd+dh])
			}
			m.kern.Gemm(n, s, n, values, o, ldd, false, ws.tiles)
		}
		t += n
	}
}

func softmaxRows(s []float32, n int) {
	for r := 0; r < len(s); r += n {
		row := s[r : r+n]
		mx := row[0]
		for _, v := range row[1:] {
			if v > mx {
				mx = v
			}
		}
		var sum float32
		for i, v := range row {
			e := expNonPositive(v - mx)
			row[i] = e
			sum += e
		}
		inv := 1 / sum
		for i := range row {
			row[i] *= inv
		}
	}
}

// expNonPositive returns e^x for x ≤ 0 to within 2 ulp, several times
// faster than float32(math.Exp(float64(x))); the softmax spends most of its
// time here. It is Cephes' expf: x = k·ln2 + r with |r| ≤ ln2/2, e^r by a
// polynomial, 2^k by building the float's exponent.
func expNonPositive(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2Hi = 0.693359375
		ln2Lo = -2.12194440e-4
	)
	if x < -87 {
		return 0 // e^-87 ≈ 1.6e-38: nothing next to the row maximum's 1
	}
	k := int32(x*log2e - 0.5) // round(x·log2 e), x ≤ 0
	fk := float32(k)
	r := x - fk*ln2Hi - fk*ln2Lo
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	p = p*r*r + r + 1
	return p * math.Float32frombits(uint32(k+127)<<23)
}

// apply layer-normalises rows rows of x (row stride ldx) into y (row stride
// ldy); the width is that of the norm's scale, a multiple of 4.
func (ln layerNorm) apply(rows int, x []float32, ldx int, y []float32, ldy int) {
	width := len(ln.scale)
	inv := 1 / float32(width)
	for r := range rows {
		xr := x[r*ldx : r*ldx+width]
		mean := sum(xr) * inv
		rstd := float32(1 / math.Sqrt(float64(sumSquaredDev(xr, mean)*inv)+lnEpsilon))
		yr := y[r*ldy : r*ldy+width]
		for i, v := range xr {
			yr[i] = (v-mean)*rstd*ln.scale[i] + ln.bias[i]
		}
	}
}

// sum and sumSquaredDev keep four independent sums so that the additions
// do not wait on each other; len(x) must be a multiple of 4.
func sum(x []float32) float32 {
	var s0, s1, s2, s3 float32
	for i := 0; i < len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
	}
	return (s0 + s1) + (s2 + s3)
}

// sumSquaredDev returns Σ(x[i]-c)².
func sumSquaredDev(x []float32, c float32) float32 {
	var s0, s1, s2, s3 float32
	for i := 0; i < len(x); i += 4 {
		v := x[i : i+4 : i+4]
		d0, d1, d2, d3 := v[0]-c, v[1]-c, v[2]-c, v[3]-c
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	return (s0 + s1) + (s2 + s3)
}

// normalize scales v to unit length, as the graph's l2_normalize does
// (dividing by at least √1e-12).
func normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(max(ss, 1e-12)))
	for i := range v {
		v[i] *= inv
	}
}
