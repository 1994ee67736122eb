package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testKey = "sk-test-secret-0123456789"

func mustNew(tb testing.TB, provider string, getenv func(string) string, opts Options) Provider {
	tb.Helper()
	p, err := New(provider, getenv, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// keyEnv is a getenv holding every provider's key.
// searchBody runs provider's Search against a loopback server that answers
// every request with body.
func searchBody(t *testing.T, provider, body string) ([]Result, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	return mustNew(t, provider, keyEnv, Options{BaseURL: srv.URL}).Search(context.Background(), "q", 3)
}

// checkResults fails t unless err contains wantErr (when set), or else res
// equals want.
func checkResults(t *testing.T, res []Result, err error, want []Result, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func keyEnv(name string) string {
	if name == EnvTavilyAPIKey || name == EnvBraveAPIKey {
		return testKey
	}
	return ""
}

func TestKeyEnv(t *testing.T) {
	for provider, want := range map[string]string{
		DuckDuckGo: "",
		Tavily:     "VAULTASK_TAVILY_API_KEY",
		Brave:      "VAULTASK_BRAVE_API_KEY",
		"bing":     "",
	} {
		if got := KeyEnv(provider); got != want {
			t.Errorf("KeyEnv(%q) = %q, want %q", provider, got, want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	noKeys := func(string) string { return "" }
	blankKeys := func(string) string { return "   " }
	tests := []struct {
		name, provider string
		getenv         func(string) string
		opts           Options
		want           []string
	}{
		{"unknown", "bing", keyEnv, Options{}, []string{`"bing"`, "duckduckgo, tavily, brave"}},
		{"case matters", "DuckDuckGo", keyEnv, Options{}, []string{"unknown web provider"}},
		{"tavily without key", Tavily, noKeys, Options{}, []string{"tavily", "VAULTASK_TAVILY_API_KEY"}},
		{"brave with blank key", Brave, blankKeys, Options{}, []string{"brave", "VAULTASK_BRAVE_API_KEY"}},
		{"bad base URL", DuckDuckGo, keyEnv, Options{BaseURL: "ftp://127.0.0.1"}, []string{"base URL"}},
		{"base URL without host", Tavily, keyEnv, Options{BaseURL: "http://"}, []string{"base URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.provider, tt.getenv, tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestNewReadsProcessEnvByDefault(t *testing.T) {
	t.Setenv(EnvBraveAPIKey, testKey)
	if _, err := New(Brave, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(DuckDuckGo, nil, Options{}); err != nil {
		t.Fatal(err)
	}
}

// failingServer answers every request with handler and counts them.
func failingServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestProviderFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{
			name: "server error",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "boom "+testKey, http.StatusInternalServerError)
			},
			want: "status 500 Internal Server Error",
		},
		{
			name:    "unauthorized",
			handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad key", http.StatusUnauthorized) },
			want:    "status 401",
		},
		{
			name: "timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				// A handler learns of the client hanging up only once
				// the request body is read.
				_, _ = io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			want: "no answer within 50ms",
		},
		{
			name: "malformed body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"results": [{"title": 1`))
			},
			want: "", // each provider words it its own way; asserted as any error
		},
	}
	for _, provider := range Known() {
		for _, tt := range tests {
			t.Run(provider+"/"+tt.name, func(t *testing.T) {
				srv, hits := failingServer(t, tt.handler)
				p := mustNew(t, provider, keyEnv, Options{BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
				res, err := p.Search(context.Background(), "what is a backlink", 3)
				if err == nil {
					t.Fatalf("no error; results %v", res)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, provider+": ") || !strings.Contains(msg, tt.want) {
					t.Errorf("error %q, want prefix %q and %q", msg, provider+": ", tt.want)
				}
				if strings.Contains(msg, testKey) {
					t.Errorf("error %q contains the API key", msg)
				}
				if hits.Load() != 1 {
					t.Errorf("%d requests, want 1", hits.Load())
				}
			})
		}
	}
}

func TestBadArgumentsSendNothing(t *testing.T) {
	for _, provider := range Known() {
		srv, hits := failingServer(t, func(w http.ResponseWriter, r *http.Request) {})
		p := mustNew(t, provider, keyEnv, Options{BaseURL: srv.URL})
		if _, err := p.Search(context.Background(), "  ", 3); err == nil || !strings.Contains(err.Error(), "empty query") {
			t.Errorf("%s: blank query: err = %v", provider, err)
		}
		if _, err := p.Search(context.Background(), "q", 0); err == nil || !strings.Contains(err.Error(), "n=0") {
			t.Errorf("%s: n=0: err = %v", provider, err)
		}
		if hits.Load() != 0 {
			t.Errorf("%s: %d requests, want none", provider, hits.Load())
		}
	}
}

func TestCanceledContext(t *testing.T) {
	srv, _ := failingServer(t, func(w http.ResponseWriter, r *http.Request) {})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := mustNew(t, DuckDuckGo, nil, Options{BaseURL: srv.URL}).Search(ctx, "q", 3)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("err = %v, want context canceled", err)
	}
}

func TestRedirectToAnotherHostRefused(t *testing.T) {
	elsewhere, elsewhereHits := failingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "" {
			t.Error("the key reached another host")
		}
	})
	srv, _ := failingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusFound)
	})
	_, err := mustNew(t, Brave, keyEnv, Options{BaseURL: srv.URL}).Search(context.Background(), "q", 3)
	if err == nil || !strings.Contains(err.Error(), "refusing redirect") {
		t.Errorf("err = %v, want a refused redirect", err)
	}
	if elsewhereHits.Load() != 0 {
		t.Errorf("the other host got %d requests", elsewhereHits.Load())
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"<strong>Obsidian</strong>&#x27;s graph &amp; canvas", "Obsidian's graph & canvas"},
		{"line one<br>line two<p>para</p>", "line one line two para "},
		{"a &lt; b", "a < b"},
		{"x < y and <unclosed", "x < y and "},
	}
	for _, tt := range tests {
		if got := plainText(tt.in); got != tt.want {
			t.Errorf("plainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestShortenQuery(t *testing.T) {
	tests := []struct {
		q               string
		maxRunes, words int
		want            string
	}{
		{"  how   do backlinks work ", 100, 10, "how do backlinks work"},
		{"one two three four", 100, 2, "one two"},
		{"one two three four", 10, 10, "one two"},
		{"onetwothreefour", 5, 10, "onetw"},
		{"åäö åäö", 5, 10, "åäö"},
	}
	for _, tt := range tests {
		if got := shortenQuery(tt.q, tt.maxRunes, tt.words); got != tt.want {
			t.Errorf("shortenQuery(%q, %d, %d) = %q, want %q", tt.q, tt.maxRunes, tt.words, got, tt.want)
		}
	}
}

func TestCollectorLimitsLength(t *testing.T) {
	c := newCollector(1)
	c.add(strings.Repeat("title ", 100), "https://example.com", strings.Repeat("word ", 500))
	r := c.out[0]
	if n := len([]rune(r.Title)); n > maxTitleRunes {
		t.Errorf("title %d runes", n)
	}
	if n := len([]rune(r.Snippet)); n > maxSnippetRunes || !strings.HasSuffix(r.Snippet, "…") {
		t.Errorf("snippet %d runes, %q…", n, r.Snippet[:20])
	}
	c.add("", "https://example.org", "")
	if len(c.out) != 1 {
		t.Errorf("collector took %d results past n=1", len(c.out))
	}
}
