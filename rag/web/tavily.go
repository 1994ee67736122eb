package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// tavily searches Tavily's search API (docs.tavily.com, "Search" endpoint):
//
//	POST /search
//	Authorization: Bearer <key>
//	{"query": "...", "max_results": 5, "search_depth": "basic"}
//
// answered with {"query": ..., "results": [{"title", "url", "content",
// "score"}, ...], "response_time": ...}.
type tavily struct {
	*client
	key string
}

// maxTavilyResults is the documented range of max_results: 0 to 20.
const maxTavilyResults = 20

type tavilyRequest struct {
	Query      string `json:"query"`
	MaxResults int    `json:"max_results"`
	// SearchDepth is pinned to "basic": one API credit a search, where
	// "advanced" costs two.
	SearchDepth string `json:"search_depth"`
}

type tavilyResponse struct {
	// Results is a pointer so a body without the field is told apart from
	// a search that found nothing.
	Results *[]struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

func (t *tavily) Search(ctx context.Context, query string, n int) ([]Result, error) {
	if err := t.check(query, n); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	payload, err := json.Marshal(tavilyRequest{Query: query, MaxResults: min(n, maxTavilyResults), SearchDepth: "basic"})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key)
	body, err := t.fetch(req, is2xx)
	if err != nil {
		return nil, err
	}
	var resp tavilyResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("%s: malformed response: %w", t.name, err)
	}
	if resp.Results == nil {
		return nil, fmt.Errorf("%s: malformed response: no results field", t.name)
	}
	c := newCollector(n)
	for _, r := range *resp.Results {
		c.add(plainText(r.Title), r.URL, plainText(r.Content))
	}
	return c.out, nil
}
