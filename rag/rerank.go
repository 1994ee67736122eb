package rag

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// rerankSystem asks for one relevance score per passage, as a bare JSON
// array, so the reply can be parsed strictly.
const rerankSystem = `You rate how well each numbered passage answers the question.
Give every passage a relevance score from 0 (unrelated) to 10 (answers it directly).
Reply with a JSON array of numbers only, one per passage, in passage order, e.g. [7, 0, 3]. No other text.`

// rerankPassageRunes bounds each passage in the rerank prompt.
const rerankPassageRunes = 700

func rerankMessages(query string, hits []Hit) []Message {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n\n", oneLine(query, 600))
	for i, h := range hits {
		fmt.Fprintf(&b, "[%d] %s", i+1, h.Chunk.Path)
		if h.Chunk.HeadingPath != "" {
			fmt.Fprintf(&b, " › %s", h.Chunk.HeadingPath)
		}
		fmt.Fprintf(&b, "\n%s\n\n", oneLine(h.Chunk.Body, rerankPassageRunes))
	}
	fmt.Fprintf(&b, "Reply with a JSON array of %d scores.", len(hits))
	return []Message{{Role: "system", Content: rerankSystem}, {Role: "user", Content: b.String()}}
}

// parseRerank reads the reranker's reply: exactly n finite scores in
// [0, 10] as a JSON array, optionally inside one markdown code fence.
// Anything else is an error, and the pipeline keeps the fused order.
func parseRerank(reply string, n int) ([]float64, error) {
	s := strings.TrimSpace(reply)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		body, ok := strings.CutSuffix(strings.TrimSpace(rest), "```")
		if !ok {
			return nil, fmt.Errorf("rerank reply: unclosed code fence")
		}
		s = strings.TrimSpace(body)
	}
	var scores []float64
	if err := json.Unmarshal([]byte(s), &scores); err != nil {
		return nil, fmt.Errorf("rerank reply is not a JSON array of numbers: %w", err)
	}
	if len(scores) != n {
		return nil, fmt.Errorf("rerank reply has %d scores for %d passages", len(scores), n)
	}
	for i, x := range scores {
		if math.IsNaN(x) || x < 0 || x > 10 {
			return nil, fmt.Errorf("rerank score %d is %v, want 0 to 10", i+1, x)
		}
	}
	return scores, nil
}

// CrossEncoder is a rerank model behind a rerank endpoint (llama.cpp's
// llama-server --reranking, or any server of the Jina/Cohere /v1/rerank
// shape): one score per document, in document order, higher more relevant,
// on the model's own scale. *llm.Client implements it.
type CrossEncoder interface {
	Rerank(ctx context.Context, query string, docs []string) ([]float64, error)
}

// RerankOptions bound a Reranker; zero values take the defaults noted.
type RerankOptions struct {
	// Batch is how many passages one request carries; default 10.
	Batch int
	// Budget bounds the whole rerank, every batch of it; default 1.5s.
	// Past it the fused order is kept: a rerank is worth a second of the
	// answer, not the answer.
	Budget time.Duration
}

// rerankParallel is how many batches are in flight at once: enough to
// hide a local server's per-request latency, few enough not to queue a
// single-slot llama-server or Ollama far behind the budget.
const rerankParallel = 4

// Reranker re-scores the top candidates with a rerank model, in batches
// sent rerankParallel at a time, within a budget. It is safe for
// concurrent use.
type Reranker struct {
	kind string
	// score scores one batch, returning the bytes of text it sent.
	score func(ctx context.Context, query string, batch []Hit) ([]float64, int, error)
	opts  RerankOptions
	// failing is set while the model fails, so that a model that is down
	// is logged once, and its recovery once, not once per question.
	failing atomic.Bool
}

// NewChatReranker reranks with a chat model: each batch is one prompt
// listing its passages and asking for a 0–10 score each (rerankMessages),
// the reply parsed strictly. It is the way to rerank on Ollama, which has
// no rerank endpoint.
func NewChatReranker(m ChatModel, o RerankOptions) *Reranker {
	return newReranker("chat", o, func(ctx context.Context, query string, batch []Hit) ([]float64, int, error) {
		msgs := rerankMessages(query, batch)
		size := 0
		for _, m := range msgs {
			size += len(m.Content)
		}
		reply, err := m.Chat(ctx, ChatRequest{Messages: msgs})
		if err != nil {
			return nil, size, err
		}
		scores, err := parseRerank(reply, len(batch))
		return scores, size, err
	})
}

// NewCrossEncoderReranker reranks with a cross-encoder: each batch is one
// rerank request, a document per passage (rerankDocument).
func NewCrossEncoderReranker(m CrossEncoder, o RerankOptions) *Reranker {
	return newReranker("cross-encoder", o, func(ctx context.Context, query string, batch []Hit) ([]float64, int, error) {
		q := oneLine(query, 600)
		size := len(q)
		docs := make([]string, len(batch))
		for i, h := range batch {
			docs[i] = rerankDocument(h)
			size += len(docs[i])
		}
		scores, err := m.Rerank(ctx, q, docs)
		return scores, size, err
	})
}

func newReranker(kind string, o RerankOptions, score func(context.Context, string, []Hit) ([]float64, int, error)) *Reranker {
	if o.Batch <= 0 {
		o.Batch = 10
	}
	if o.Budget <= 0 {
		o.Budget = 1500 * time.Millisecond
	}
	return &Reranker{kind: kind, score: score, opts: o}
}

// rerankDocument is a passage as a cross-encoder reads it: its path and
// heading, which often say more than the text, then the text, bounded
// like a chat prompt's passage so that query and passage fit one
// llama-server batch at its default size (512 tokens).
func rerankDocument(h Hit) string {
	var b strings.Builder
	b.WriteString(h.Chunk.Path)
	if h.Chunk.HeadingPath != "" {
		fmt.Fprintf(&b, " › %s", h.Chunk.HeadingPath)
	}
	fmt.Fprintf(&b, "\n%s", oneLine(h.Chunk.Body, rerankPassageRunes))
	return b.String()
}

// RerankReport is what one rerank did and cost: what a question pays for
// it, in the trace and in `ask --json`.
type RerankReport struct {
	Kind string `json:"kind"` // "chat" or "cross-encoder"
	// Requests were sent (batches started) and carried Passages.
	Requests int `json:"requests"`
	Passages int `json:"passages"`
	// Bytes is the text sent (prompts, or query and documents), before
	// JSON framing.
	Bytes     int     `json:"bytes"`
	ElapsedMS float64 `json:"elapsed_ms"`
	// Skipped says why the fused order was kept; "" when the rerank
	// reordered.
	Skipped string `json:"skipped,omitempty"`
}

// rerankTop scores the first topK hits against query with r and reorders them
// by that score, higher first, ties in their previous order; the hits
// after topK keep their place behind them. The batches share r's budget.
// On any failure — an error, the budget spent, a reply that is not one
// finite score per passage — it returns the hits unchanged, with the error
// and a report that says why.
func rerankTop(ctx context.Context, r *Reranker, query string, hits []Hit, topK int) ([]Hit, RerankReport, error) {
	rep := RerankReport{Kind: r.kind}
	n := min(topK, len(hits))
	if n == 0 {
		return hits, rep, nil
	}
	start := time.Now()
	out, err := r.rerank(ctx, query, hits, n, &rep)
	rep.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		rep.Skipped = err.Error()
		return hits, rep, err
	}
	return out, rep, nil
}

func (r *Reranker) rerank(parent context.Context, query string, hits []Hit, n int, rep *RerankReport) ([]Hit, error) {
	ctx, cancel := context.WithTimeout(parent, r.opts.Budget)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rerankParallel)
	scores := make([]float64, n)
	var mu sync.Mutex
	for lo := 0; lo < n && gctx.Err() == nil; lo += r.opts.Batch {
		hi := min(lo+r.opts.Batch, n)
		batch := hits[lo:hi]
		g.Go(func() error {
			got, size, err := r.score(gctx, query, batch)
			mu.Lock()
			rep.Requests++
			rep.Passages += len(batch)
			rep.Bytes += size
			mu.Unlock()
			if err != nil {
				return err
			}
			if len(got) != len(batch) {
				return fmt.Errorf("%d scores for %d passages", len(got), len(batch))
			}
			for i, x := range got {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return fmt.Errorf("passage %d has no finite score", lo+i+1)
				}
			}
			copy(scores[lo:hi], got)
			return nil
		})
	}
	err := g.Wait()
	if err == nil {
		// The budget ran out between batches: some were never sent.
		err = ctx.Err()
	}
	if err != nil {
		if parent.Err() == nil && ctx.Err() != nil {
			return nil, fmt.Errorf("rerank (%s): over its %v budget: %w", r.kind, r.opts.Budget, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("rerank (%s): %w", r.kind, err)
	}
	head := slices.Clone(hits[:n])
	for i := range head {
		head[i].Rerank, head[i].Reranked = scores[i], true
	}
	slices.SortStableFunc(head, func(a, b Hit) int { return cmp.Compare(b.Rerank, a.Rerank) })
	return append(head, hits[n:]...), nil
}

// rerank re-scores the top candidates when a reranker is configured; on
// failure or over its budget it keeps the fused order and says so in the
// trace and the report. A failing model is logged when it starts failing
// and when it recovers, not at every question.
func (p *Pipeline) rerank(ctx context.Context, query string, candidates []Hit, topK int, tr *Trace) ([]Hit, *RerankReport) {
	rr := p.opts.Reranker
	if rr == nil {
		tr.stage("rerank", nil, "off: no rerank model")
		return candidates, nil
	}
	out, rep, err := rerankTop(ctx, rr, query, candidates, topK)
	cost := fmt.Sprintf("%d requests, %d passages, %d bytes, %.0f ms", rep.Requests, rep.Passages, rep.Bytes, rep.ElapsedMS)
	if err != nil {
		if !rr.failing.Swap(true) {
			p.log.Warn("rerank failed: keeping the fused order until it answers again", keyErr, err)
		}
		tr.stage("rerank", candidates, fmt.Sprintf("skipped (%v): fused order kept; %s", err, cost))
		return candidates, &rep
	}
	if rr.failing.Swap(false) {
		p.log.Info("rerank recovered")
	}
	var moves []string
	for i, h := range out {
		if h.Chunk.RowID != candidates[i].Chunk.RowID && h.Reranked {
			moves = append(moves, fmt.Sprintf("%s now at %d (rerank %.1f)", hitLabel(h), i+1, h.Rerank))
		}
	}
	tr.stage("rerank", out, fmt.Sprintf("top %d re-scored by the %s rerank model; %s", min(topK, len(candidates)), rep.Kind, cost), moves...)
	return out, &rep
}
