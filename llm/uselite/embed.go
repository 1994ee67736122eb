package uselite

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Tokenize returns the token ids Embed gives the model for text: white space
// collapsed as Embed does, before any windowing.
func (m *Model) Tokenize(text string) []int {
	return m.tok.encode(normalizeSpace(text))
}

// Embed returns one unit vector of Dim floats per text. Runs of white space
// count as one space. A text longer than the model's 128-token context is
// cut into windows of at most 128 tokens and of near-equal length, and its
// vector is the normalised mean of theirs, weighted by window length. The
// work is spread over GOMAXPROCS goroutines; Embed stops early with the
// context's error when ctx is done.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	seqs := make([][]int, len(texts))
	for i, s := range texts {
		seqs[i] = m.Tokenize(s)
	}
	return m.embedTokens(ctx, seqs)
}

// embedTokens is Embed after tokenizing.
func (m *Model) embedTokens(ctx context.Context, seqs [][]int) ([][]float32, error) {
	var wins [][]int
	first := make([]int, len(seqs)+1) // seqs[i] has windows first[i]:first[i+1]
	for i, ids := range seqs {
		first[i] = len(wins)
		wins = append(wins, windows(ids)...)
	}
	first[len(seqs)] = len(wins)
	vecs, err := m.embedWindows(ctx, wins)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(seqs))
	buf := make([]float32, len(seqs)*Dim)
	for i := range seqs {
		o := buf[i*Dim : (i+1)*Dim : (i+1)*Dim]
		if first[i+1]-first[i] == 1 {
			copy(o, vecs[first[i]])
		} else {
			for j := first[i]; j < first[i+1]; j++ {
				weight := float32(len(wins[j]))
				for c, v := range vecs[j] {
					o[c] += weight * v
				}
			}
			normalize(o)
		}
		out[i] = o
	}
	return out, nil
}

// windows cuts ids into the fewest windows of at most maxTokens tokens, of
// lengths differing by at most one. An empty sequence is one empty window.
func windows(ids []int) [][]int {
	if len(ids) <= maxTokens {
		return [][]int{ids}
	}
	n := (len(ids) + maxTokens - 1) / maxTokens
	size, longer := len(ids)/n, len(ids)%n
	out := make([][]int, n)
	for i := range out {
		l := size
		if i < longer {
			l++
		}
		out[i], ids = ids[:l:l], ids[l:]
	}
	return out
}

// embedWindows returns the unit vector of each window as the TF.js model
// computes it: tokens from position maxTokens on are dropped. Windows are
// stacked into groups of at most maxGroupTokens tokens and the groups shared
// out among the workers.
func (m *Model) embedWindows(ctx context.Context, wins [][]int) ([][]float32, error) {
	wins = clipped(wins)
	vecs := make([][]float32, len(wins))
	buf := make([]float32, len(wins)*Dim)
	for i := range vecs {
		vecs[i] = buf[i*Dim : (i+1)*Dim : (i+1)*Dim]
	}
	groups := grouped(wins, runtime.GOMAXPROCS(0))
	var next atomic.Int64
	work := func() {
		ws := m.scratch.Get().(*workspace)
		defer m.scratch.Put(ws)
		for ctx.Err() == nil {
			g := int(next.Add(1)) - 1
			if g >= len(groups) {
				return
			}
			lo, hi := groups[g][0], groups[g][1]
			m.forward(ws, wins[lo:hi], vecs[lo:hi])
		}
	}
	if workers := min(runtime.GOMAXPROCS(0), len(groups)); workers == 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(work)
		}
		wg.Wait()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return vecs, nil
}

func clipped(wins [][]int) [][]int {
	out := make([][]int, len(wins))
	for i, w := range wins {
		out[i] = w[:min(len(w), maxTokens)]
	}
	return out
}

// grouped splits wins into runs [lo, hi) of at most maxGroupTokens tokens,
// smaller when there are few tokens, so that each of the workers gets work.
// An empty window counts as one token: it still costs the output layer.
func grouped(wins [][]int, workers int) [][2]int {
	total := 0
	for _, w := range wins {
		total += max(len(w), 1)
	}
	budget := min(maxGroupTokens, max(maxTokens, (total+workers-1)/workers))
	var groups [][2]int
	lo, tokens := 0, 0
	for i, w := range wins {
		n := max(len(w), 1)
		if i > lo && tokens+n > budget {
			groups = append(groups, [2]int{lo, i})
			lo, tokens = i, 0
		}
		tokens += n
	}
	if lo < len(wins) {
		groups = append(groups, [2]int{lo, len(wins)})
	}
	return groups
}
