package rag

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vaultask/vaultask/llm"
)

// rerankSystem asks for one relevance score per passage, as a bare JSON
// array, so the reply can be parsed strictly.
const rerankSystem = `You rate how well each numbered passage answers the question.
Give every passage a relevance score from 0 (unrelated) to 10 (answers it directly).
Reply with a JSON array of numbers only, one per passage, in passage order, e.g. [7, 0, 3]. No other text.`

// rerankPassageRunes bounds each passage in the rerank prompt.
const rerankPassageRunes = 700

func rerankMessages(query string, hits []Hit) []llm.Message {
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
	return []llm.Message{{Role: "system", Content: rerankSystem}, {Role: "user", Content: b.String()}}
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

// Rerank asks model to score the first topK hits against query in one
// batched prompt and reorders them by that score, higher first, ties in
// their previous order; the hits after topK keep their place behind them.
// On any failure it returns the hits unchanged with the error.
func Rerank(ctx context.Context, model ChatModel, query string, hits []Hit, topK int) ([]Hit, error) {
	n := min(topK, len(hits))
	if n == 0 {
		return hits, nil
	}
	reply, err := model.Chat(ctx, rerankMessages(query, hits[:n]))
	if err != nil {
		return hits, fmt.Errorf("rerank: %w", err)
	}
	scores, err := parseRerank(reply, n)
	if err != nil {
		return hits, err
	}
	head := slices.Clone(hits[:n])
	for i := range head {
		head[i].Rerank, head[i].Reranked = scores[i], true
	}
	slices.SortStableFunc(head, func(a, b Hit) int { return cmp.Compare(b.Rerank, a.Rerank) })
	return append(head, hits[n:]...), nil
}
