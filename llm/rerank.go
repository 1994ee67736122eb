package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxRerankReply bounds a rerank reply read into memory: a few numbers per
// document, so a megabyte is far beyond any honest reply.
const maxRerankReply = 1 << 20

// rerankRequest is the body of POST /v1/rerank as llama.cpp's llama-server
// (--reranking), Jina and Cohere take it.
type rerankRequest struct {
	Model     string   `json:"model"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
}

// Rerank scores each document against query with a cross-encoder behind
// the server's rerank endpoint (the API root + "/rerank", so /v1/rerank),
// returning one score per document in document order, on the model's own
// scale (llama-server sends raw logits, negative ones included). It does
// not retry: the caller's budget is short and a fallback is ready.
func (c *Client) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(rerankRequest{Model: c.model.Name, Query: query, Documents: docs, TopN: len(docs)})
	if err != nil {
		return nil, c.wrap("rerank", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/rerank", bytes.NewReader(body))
	if err != nil {
		return nil, c.wrap("rerank", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	res, err := c.httpClient.Do(req)
	if err != nil {
		return nil, c.wrap("rerank", err)
	}
	defer res.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(res.Body, maxRerankReply+1))
	if err != nil {
		return nil, c.wrap("rerank", err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, c.wrap("rerank", fmt.Errorf("status %s: %s", res.Status, snippet(reply)))
	}
	if len(reply) > maxRerankReply {
		return nil, c.wrap("rerank", fmt.Errorf("reply is larger than %d bytes", maxRerankReply))
	}
	scores, err := ParseRerankReply(reply, len(docs))
	return scores, c.wrap("rerank", err)
}

// ParseRerankReply reads a rerank endpoint's reply for n documents,
// {"results": [{"index": i, "relevance_score": x}, …]} in any order, into
// one score per document in document order. Every document must have
// exactly one score (JSON has no NaN or infinity): a reply that leaves one
// out cannot be ranked against the rest.
func ParseRerankReply(reply []byte, n int) ([]float64, error) {
	var r struct {
		Results []struct {
			Index *int     `json:"index"`
			Score *float64 `json:"relevance_score"`
		} `json:"results"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, fmt.Errorf("reply is not a rerank result: %w", err)
	}
	if len(r.Results) != n {
		return nil, fmt.Errorf("reply has %d results for %d documents", len(r.Results), n)
	}
	scores := make([]float64, n)
	seen := make([]bool, n)
	for _, x := range r.Results {
		switch {
		case x.Index == nil || x.Score == nil:
			return nil, errors.New("a result lacks its index or relevance_score")
		case *x.Index < 0 || *x.Index >= n || seen[*x.Index]:
			return nil, fmt.Errorf("result index %d is out of range or repeated", *x.Index)
		}
		seen[*x.Index] = true
		scores[*x.Index] = *x.Score
	}
	return scores, nil
}

// snippet is the start of an error reply, on one line, for the log.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
