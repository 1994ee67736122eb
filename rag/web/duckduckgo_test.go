package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ddgPage is a results page in the shape the maintained scrapers read from
// the real endpoint (searxng searx/engines/duckduckgo.py: div#links >
// div.web-result, h2 > a, a.result__snippet, ads as "result--ad";
// deedy5/duckduckgo_search _text_html: div.results_links, a.result__a,
// div.no-results, the nav-link form): an ad first, click-through links
// through duckduckgo.com/l/?uddg=, bold query terms, entities, a direct link,
// a result without snippet and a duplicate.
const ddgPage = `<!DOCTYPE html>
<html><head><title>obsidian backlinks at DuckDuckGo</title></head>
<body>
<div id="links" class="results">
  <div class="result results_links results_links_deep result--ad ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=notes.example&amp;ad_provider=x&amp;u3=1">Best note app &ndash; 50% off</a></h2>
      <a class="result__snippet" href="https://duckduckgo.com/y.js?u3=1">Sponsored</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fhelp.obsidian.md%2FPlugins%2FBacklinks%3Fa%3D1%26b%3D2&amp;rut=4f2a">
          <b>Backlinks</b> - Obsidian Help
        </a>
      </h2>
      <div class="result__extras"><div class="result__extras__url">
        <a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fhelp.obsidian.md%2FPlugins%2FBacklinks&amp;rut=4f2a">help.obsidian.md/Plugins/Backlinks</a>
      </div></div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fhelp.obsidian.md%2FPlugins%2FBacklinks&amp;rut=4f2a">The <b>backlinks</b> pane lists notes that link to the active note &amp; unlinked mentions &#x27;too&#x27;.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://forum.obsidian.md/t/backlinks/1234">Backlinks &lt;panel&gt; question</a></h2>
      <a class="result__snippet" href="https://forum.obsidian.md/t/backlinks/1234">How do I show<br>backlinks in the document?</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fno-snippet&amp;rut=9">No snippet here</a></h2>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://forum.obsidian.md/t/backlinks/1234">Duplicate of the forum thread</a></h2>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Ffifth&amp;rut=5">Fifth</a></h2>
      <a class="result__snippet" href="#">Fifth snippet.</a>
    </div>
  </div>
  <div class="nav-link">
    <form action="/html/" method="post">
      <input type="submit" class="btn btn--alt" value="Next">
      <input type="hidden" name="q" value="obsidian backlinks">
      <input type="hidden" name="s" value="10">
      <input type="hidden" name="vqd" value="4-123">
    </form>
  </div>
</div>
</body></html>`

var ddgWant = []Result{
	{
		Title:   "Backlinks - Obsidian Help",
		URL:     "https://help.obsidian.md/Plugins/Backlinks?a=1&b=2",
		Snippet: "The backlinks pane lists notes that link to the active note & unlinked mentions 'too'.",
	},
	{
		Title:   "Backlinks <panel> question",
		URL:     "https://forum.obsidian.md/t/backlinks/1234",
		Snippet: "How do I show backlinks in the document?",
	},
	{Title: "No snippet here", URL: "https://example.org/no-snippet"},
	{Title: "Fifth", URL: "https://example.com/fifth", Snippet: "Fifth snippet."},
}

func TestDuckDuckGoSearch(t *testing.T) {
	var got struct{ method, path, contentType, q, userAgent string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path = r.Method, r.URL.Path
		got.contentType = r.Header.Get("Content-Type")
		got.userAgent = r.UserAgent()
		if err := r.ParseForm(); err != nil {
			t.Errorf("parse form: %v", err)
		}
		got.q = r.PostForm.Get("q")
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		_, _ = w.Write([]byte(ddgPage))
	}))
	defer srv.Close()

	p := mustNew(t, DuckDuckGo, nil, Options{BaseURL: srv.URL, UserAgent: "test-agent"})
	if p.Name() != DuckDuckGo {
		t.Errorf("Name() = %q", p.Name())
	}
	res, err := p.Search(context.Background(), "obsidian backlinks & more", 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ddgWant, res); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if got.method != http.MethodPost || got.path != "/html/" {
		t.Errorf("request %s %s, want POST /html/", got.method, got.path)
	}
	if got.contentType != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type %q", got.contentType)
	}
	if got.q != "obsidian backlinks & more" {
		t.Errorf("form q = %q", got.q)
	}
	if got.userAgent != "test-agent" {
		t.Errorf("User-Agent %q", got.userAgent)
	}

	res, err = p.Search(context.Background(), "obsidian backlinks", 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ddgWant[:2], res); diff != "" {
		t.Errorf("capped at 2 (-want +got):\n%s", diff)
	}
}

func TestDuckDuckGoThrottled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(ddgPage))
	}))
	defer srv.Close()
	_, err := mustNew(t, DuckDuckGo, nil, Options{BaseURL: srv.URL}).Search(context.Background(), "q", 3)
	if err == nil || !strings.Contains(err.Error(), "duckduckgo: status 202") {
		t.Errorf("err = %v, want duckduckgo: status 202", err)
	}
}

func TestParseDuckDuckGoPages(t *testing.T) {
	tests := []struct {
		name    string
		page    string
		want    []Result
		wantErr string
	}{
		{
			name: "no results notice",
			page: `<html><body><div id="links" class="results"><div class="no-results">No results.</div></div></body></html>`,
			want: []Result{},
		},
		{name: "empty body", page: "", wantErr: "no results found"},
		{name: "unrelated page", page: "<html><body><p>Welcome</p></body></html>", wantErr: "no results found"},
		{
			name:    "bot challenge",
			page:    `<html><body><form id="challenge-form" action="/anomaly.js"><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div></form></body></html>`,
			wantErr: "bot challenge",
		},
		{
			name:    "only ads",
			page:    `<div class="result result--ad"><a class="result__a" href="https://duckduckgo.com/y.js?ad_domain=x">Ad</a></div>`,
			wantErr: "no results found",
		},
		{
			name: "unsafe and relative links skipped",
			page: `<div class="result"><a class="result__a" href="javascript:alert(1)">Bad</a></div>
<div class="result"><a class="result__a" href="/html/?q=x">Internal</a></div>
<div class="result"><a class="result__a" href="//duckduckgo.com/settings">Settings</a></div>
<div class="result"><a class="result__a" href="//example.net/x">Protocol-relative</a></div>`,
			want: []Result{{Title: "Protocol-relative", URL: "https://example.net/x"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDuckDuckGo([]byte(tt.page), 5)
			checkResults(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestUnwrapRedirect(t *testing.T) {
	tests := []struct{ href, want string }{
		{"//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%20b%3Fx%3D1&rut=abc", "https://example.com/a b?x=1"},
		{"https://duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2F", "https://example.com/"},
		{"https://html.duckduckgo.com/l?uddg=http%3A%2F%2Fexample.com", "http://example.com"},
		{"https://example.com/page", "https://example.com/page"},
		{"//example.com/page", "https://example.com/page"},
		{"https://duckduckgo.com/y.js?ad_domain=x&u3=1", ""},
		{"//duckduckgo.com/l/?rut=abc", ""},
		{"%zz", ""},
	}
	for _, tt := range tests {
		if got := unwrapRedirect(tt.href); got != tt.want {
			t.Errorf("unwrapRedirect(%q) = %q, want %q", tt.href, got, tt.want)
		}
	}
}

func FuzzParseDuckDuckGo(f *testing.F) {
	f.Add([]byte(ddgPage))
	f.Add([]byte(`<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=%">x</a><a class="result__snippet">&#0;</a></div>`))
	f.Add([]byte(`<div class="no-results"></div>`))
	f.Add([]byte(`<form id="challenge-form">`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, page []byte) {
		const n = 3
		res, err := parseDuckDuckGo(page, n)
		if err != nil {
			return
		}
		if len(res) > n {
			t.Fatalf("%d results, want at most %d", len(res), n)
		}
		for _, r := range res {
			if r.Title == "" || !(strings.HasPrefix(r.URL, "http://") || strings.HasPrefix(r.URL, "https://")) {
				t.Fatalf("bad result %+v", r)
			}
		}
	})
}
