package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tavilyAnswer follows the response documented for POST /search
// (docs.tavily.com, API reference "Search").
const tavilyAnswer = `{
  "query": "what is a canvas in obsidian",
  "follow_up_questions": null,
  "answer": null,
  "images": [],
  "results": [
    {"title": "Canvas - Obsidian Help", "url": "https://help.obsidian.md/Plugins/Canvas",
     "content": "Canvas is a core plugin for <b>visual</b> note-taking &amp; thinking.", "score": 0.91, "raw_content": null},
    {"title": "", "url": "https://obsidian.md/canvas", "content": "  An infinite   space.\n", "score": 0.8, "raw_content": null},
    {"title": "Not a web link", "url": "mailto:someone@example.com", "content": "x", "score": 0.5, "raw_content": null},
    {"title": "Third", "url": "https://example.com/3", "content": "three", "score": 0.4, "raw_content": null}
  ],
  "response_time": 1.09
}`

func TestTavilySearch(t *testing.T) {
	var got struct {
		method, path, auth, contentType string
		body                            map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path = r.Method, r.URL.Path
		got.auth, got.contentType = r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		got.body = nil
		if err := json.NewDecoder(r.Body).Decode(&got.body); err != nil {
			t.Errorf("request body: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(tavilyAnswer))
	}))
	defer srv.Close()

	p := mustNew(t, Tavily, keyEnv, Options{BaseURL: srv.URL + "/"})
	res, err := p.Search(context.Background(), "what is a canvas in obsidian", 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Title: "Canvas - Obsidian Help", URL: "https://help.obsidian.md/Plugins/Canvas", Snippet: "Canvas is a core plugin for visual note-taking & thinking."},
		{Title: "https://obsidian.md/canvas", URL: "https://obsidian.md/canvas", Snippet: "An infinite space."},
		{Title: "Third", URL: "https://example.com/3", Snippet: "three"},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if got.method != http.MethodPost || got.path != "/search" {
		t.Errorf("request %s %s, want POST /search", got.method, got.path)
	}
	if got.auth != "Bearer "+testKey {
		t.Errorf("Authorization %q", got.auth)
	}
	if got.contentType != "application/json" {
		t.Errorf("Content-Type %q", got.contentType)
	}
	wantBody := map[string]any{"query": "what is a canvas in obsidian", "max_results": 5.0, "search_depth": "basic"}
	if diff := cmp.Diff(wantBody, got.body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if _, hasKey := got.body["api_key"]; hasKey {
		t.Error("key sent in the body")
	}

	res, err = p.Search(context.Background(), "q", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || got.body["max_results"] != 1.0 {
		t.Errorf("n=1: %d results, max_results %v", len(res), got.body["max_results"])
	}
	if _, err := p.Search(context.Background(), "q", 50); err != nil {
		t.Fatal(err)
	}
	if got.body["max_results"] != 20.0 {
		t.Errorf("n=50: max_results %v, want the documented maximum 20", got.body["max_results"])
	}
}

func TestTavilyResponses(t *testing.T) {
	tests := []struct {
		name, body, wantErr string
		want                []Result
	}{
		{name: "nothing found", body: `{"query": "q", "results": [], "response_time": 0.5}`, want: []Result{}},
		{name: "no results field", body: `{"detail": {"error": "Unauthorized"}}`, wantErr: "tavily: malformed response: no results field"},
		{name: "not JSON", body: `<html>gateway</html>`, wantErr: "tavily: malformed response"},
		{name: "results not a list", body: `{"results": {"title": "x"}}`, wantErr: "tavily: malformed response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := searchBody(t, Tavily, tt.body)
			checkResults(t, res, err, tt.want, tt.wantErr)
		})
	}
}
