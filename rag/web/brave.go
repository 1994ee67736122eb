package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// brave searches the Brave Search API's web endpoint
// (api-dashboard.search.brave.com, Web Search "GET /res/v1/web/search" and
// the WebSearchApiResponse object):
//
//	GET /res/v1/web/search?q=...&count=5
//	X-Subscription-Token: <key>
//
// answered with {"type": "search", "web": {"results": [{"title", "url",
// "description", ...}]}, ...}; "web" is absent when nothing matched, and
// descriptions mark the query's terms with <strong>.
type brave struct {
	*client
	key string
}

// The documented limits: count 1 to 20; q at most 400 characters and 50
// words.
const (
	maxBraveResults    = 20
	maxBraveQueryRunes = 400
	maxBraveQueryWords = 50
)

type braveResponse struct {
	Type string `json:"type"`
	Web  *struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"results"`
	} `json:"web"`
}

func (b *brave) Search(ctx context.Context, query string, n int) ([]Result, error) {
	if err := b.check(query, n); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	params := url.Values{
		"q":     {shortenQuery(query, maxBraveQueryRunes, maxBraveQueryWords)},
		"count": {strconv.Itoa(min(n, maxBraveResults))},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.endpoint+"?"+params.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.name, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	body, err := b.fetch(req, is2xx)
	if err != nil {
		return nil, err
	}
	var resp braveResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("%s: malformed response: %w", b.name, err)
	}
	if resp.Type != "search" {
		return nil, fmt.Errorf("%s: malformed response: type %q, want \"search\"", b.name, resp.Type)
	}
	c := newCollector(n)
	if resp.Web != nil {
		for _, r := range resp.Web.Results {
			c.add(plainText(r.Title), r.URL, plainText(r.Description))
		}
	}
	return c.out, nil
}
