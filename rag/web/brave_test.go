package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// braveAnswer follows the documented WebSearchApiResponse
// (api-dashboard.search.brave.com, Web Search response objects): "type" is
// always "search", web results carry title, url and an HTML description.
const braveAnswer = `{
  "type": "search",
  "query": {"original": "obsidian graph view", "more_results_available": true},
  "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
  "web": {
    "type": "search",
    "results": [
      {"title": "Graph view - Obsidian Help", "url": "https://help.obsidian.md/Plugins/Graph+view",
       "description": "<strong>Graph</strong> <strong>view</strong> shows the relationships between your notes &amp; their links.",
       "page_age": "2024-05-01T00:00:00", "extra_snippets": ["more"], "profile": {"name": "Obsidian"}},
      {"title": "Obsidian&#x27;s <strong>graph</strong>", "url": "https://forum.obsidian.md/t/graph/1",
       "description": "Forum thread."},
      {"title": "Third", "url": "https://example.com/3", "description": "three"}
    ]
  }
}`

func TestBraveSearch(t *testing.T) {
	var got struct{ method, path, q, count, token, accept string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path = r.Method, r.URL.Path
		got.q, got.count = r.URL.Query().Get("q"), r.URL.Query().Get("count")
		got.token, got.accept = r.Header.Get("X-Subscription-Token"), r.Header.Get("Accept")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(braveAnswer))
	}))
	defer srv.Close()

	p := mustNew(t, Brave, keyEnv, Options{BaseURL: srv.URL})
	res, err := p.Search(context.Background(), "obsidian graph view?", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Title: "Graph view - Obsidian Help", URL: "https://help.obsidian.md/Plugins/Graph+view", Snippet: "Graph view shows the relationships between your notes & their links."},
		{Title: "Obsidian's graph", URL: "https://forum.obsidian.md/t/graph/1", Snippet: "Forum thread."},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if got.method != http.MethodGet || got.path != "/res/v1/web/search" {
		t.Errorf("request %s %s, want GET /res/v1/web/search", got.method, got.path)
	}
	if got.q != "obsidian graph view?" || got.count != "2" {
		t.Errorf("q=%q count=%q", got.q, got.count)
	}
	if got.token != testKey || got.accept != "application/json" {
		t.Errorf("X-Subscription-Token %q, Accept %q", got.token, got.accept)
	}

	long := strings.Repeat("word ", 60)
	if _, err := p.Search(context.Background(), long, 40); err != nil {
		t.Fatal(err)
	}
	if words := len(strings.Fields(got.q)); words != 50 || got.count != "20" {
		t.Errorf("long query: %d words, count %s; want the documented 50 and 20", words, got.count)
	}
}

func TestBraveResponses(t *testing.T) {
	tests := []struct {
		name, body, wantErr string
		want                []Result
	}{
		{name: "no web section", body: `{"type": "search", "query": {"original": "zzqx"}}`, want: []Result{}},
		{name: "wrong type", body: `{"type": "ErrorResponse", "error": {"code": "x"}}`, wantErr: `brave: malformed response: type "ErrorResponse"`},
		{name: "empty object", body: `{}`, wantErr: "brave: malformed response"},
		{name: "not JSON", body: `rate limited`, wantErr: "brave: malformed response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := searchBody(t, Brave, tt.body)
			checkResults(t, res, err, tt.want, tt.wantErr)
		})
	}
}
