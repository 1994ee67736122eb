package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vaultask/vaultask/internal/clip"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Result is one web search hit, as plain text.
type Result struct {
	Title, URL, Snippet string
}

// Provider is one web search service. Providers hold no per-call state and
// are safe for concurrent use.
type Provider interface {
	// Name is the provider's configuration name, e.g. "duckduckgo".
	Name() string
	// Search returns at most n results for query. A failure (network,
	// timeout, non-2xx status, a body that does not parse) is an error that
	// names the provider and never contains its key.
	Search(ctx context.Context, query string, n int) ([]Result, error)
}

// Options tune how a provider talks to its service; the zero value is the
// real service with the defaults below.
type Options struct {
	// BaseURL replaces the scheme and host of the provider's endpoint (the
	// path stays); "" is the real service. Tests point it at loopback.
	BaseURL string
	// HTTPClient makes the requests; nil is a client that refuses redirects
	// to another host, so an API key header never leaves its service.
	HTTPClient *http.Client
	// Timeout bounds one Search, reading the body included; 0 is
	// DefaultTimeout.
	Timeout time.Duration
	// UserAgent is sent with every request; "" is DefaultUserAgent.
	UserAgent string
}

// Provider names, as config's web.provider spells them.
const (
	DuckDuckGo = "duckduckgo"
	Tavily     = "tavily"
	Brave      = "brave"
)

// Environment variables holding the API keys. They are reserved names in
// config, never configuration keys, so a key never lands in a config file.
const (
	EnvTavilyAPIKey = "VAULTASK_TAVILY_API_KEY"
	EnvBraveAPIKey  = "VAULTASK_BRAVE_API_KEY"
)

const (
	// DefaultTimeout bounds a Search when Options.Timeout is 0: the web is a
	// fallback, and an answer should not wait long for it.
	DefaultTimeout = 10 * time.Second
	// DefaultUserAgent is browser-shaped because DuckDuckGo's HTML endpoint
	// may turn away clients that do not look like one.
	DefaultUserAgent = "Mozilla/5.0 (compatible; vaultask)"
)

// Known lists the provider names New accepts.
func Known() []string { return []string{DuckDuckGo, Tavily, Brave} }

// KeyEnv names the environment variable holding provider's API key: "" for
// DuckDuckGo, which needs none, and for unknown providers.
func KeyEnv(provider string) string {
	switch provider {
	case Tavily:
		return EnvTavilyAPIKey
	case Brave:
		return EnvBraveAPIKey
	}
	return ""
}

// New returns the named provider. getenv looks up its API key (nil is
// os.Getenv). Selecting a provider without its key is an error naming the
// variable; an unknown provider is an error listing the known ones.
func New(provider string, getenv func(string) string, opts Options) (Provider, error) {
	var origin, path string
	switch provider {
	case DuckDuckGo:
		origin, path = "https://html.duckduckgo.com", "/html/"
	case Tavily:
		origin, path = "https://api.tavily.com", "/search"
	case Brave:
		origin, path = "https://api.search.brave.com", "/res/v1/web/search"
	default:
		return nil, fmt.Errorf("unknown web provider %q (known: %s)", provider, strings.Join(Known(), ", "))
	}
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: base URL %q is not an http(s) URL", provider, opts.BaseURL)
		}
		origin = strings.TrimRight(opts.BaseURL, "/")
	}
	c := &client{
		name:      provider,
		endpoint:  origin + path,
		http:      opts.HTTPClient,
		timeout:   opts.Timeout,
		userAgent: opts.UserAgent,
	}
	if c.http == nil {
		c.http = &http.Client{CheckRedirect: sameHostRedirects}
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if provider == DuckDuckGo {
		return &duckDuckGo{c}, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	env := KeyEnv(provider)
	key := strings.TrimSpace(getenv(env))
	if key == "" {
		return nil, fmt.Errorf("web provider %s needs an API key: set %s", provider, env)
	}
	if provider == Tavily {
		return &tavily{c, key}, nil
	}
	return &brave{c, key}, nil
}

// maxRedirects matches net/http's own default limit.
const maxRedirects = 10

func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("too many redirects")
	}
	if req.URL.Host != via[0].URL.Host {
		return fmt.Errorf("refusing redirect to another host (%s)", req.URL.Host)
	}
	return nil
}

// maxBody bounds a response body; a results page or JSON answer is a few
// hundred kilobytes at most.
const maxBody = 4 << 20

// client is what the three providers share: the endpoint, the HTTP client
// and the error wording.
type client struct {
	name      string
	endpoint  string
	http      *http.Client
	timeout   time.Duration
	userAgent string
}

func (c *client) Name() string { return c.name }

// check rejects arguments no service could answer, before any request.
func (c *client) check(query string, n int) error {
	if strings.TrimSpace(query) == "" {
		return fmt.Errorf("%s: empty query", c.name)
	}
	if n < 1 {
		return fmt.Errorf("%s: want at least 1 result, got n=%d", c.name, n)
	}
	return nil
}

// fetch sends req and returns the body of a response whose status passes ok.
// Transport errors are reported without the request URL, which carries the
// query.
func (c *client) fetch(req *http.Request, ok func(status int) bool) ([]byte, error) {
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		if ue, isURL := errors.AsType[*url.Error](err); isURL {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: no answer within %s: %w", c.name, c.timeout, err)
		}
		return nil, fmt.Errorf("%s: request: %w", c.name, err)
	}
	defer resp.Body.Close()
	if !ok(resp.StatusCode) {
		return nil, fmt.Errorf("%s: status %s", c.name, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: no answer within %s: %w", c.name, c.timeout, err)
		}
		return nil, fmt.Errorf("%s: read body: %w", c.name, err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("%s: response body over %d bytes", c.name, maxBody)
	}
	return body, nil
}

func is2xx(status int) bool { return status >= 200 && status <= 299 }

// collector turns raw hits into Results: plain text, absolute http(s) URLs,
// no duplicate URL, at most n.
type collector struct {
	n    int
	seen map[string]bool
	out  []Result
}

func newCollector(n int) *collector {
	return &collector{n: n, seen: map[string]bool{}, out: []Result{}}
}

func (c *collector) full() bool { return len(c.out) >= c.n }

// add keeps one hit; title and snippet are plain text already (see
// plainText), so a literal "<" in them stays text.
func (c *collector) add(title, rawURL, snippet string) {
	if c.full() {
		return
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return
	}
	link := u.String()
	if c.seen[link] {
		return
	}
	c.seen[link] = true
	title = clip.Text(strings.Join(strings.Fields(title), " "), maxTitleRunes, " ")
	if title == "" {
		title = link
	}
	snippet = clip.Text(strings.Join(strings.Fields(snippet), " "), maxSnippetRunes, " ")
	c.out = append(c.out, Result{Title: title, URL: link, Snippet: snippet})
}

// Results reach a model's prompt, so a provider that returns whole pages
// (Tavily's content can be long) is cut to a snippet's size.
const (
	maxTitleRunes   = 200
	maxSnippetRunes = 600
)

// plainText strips tags and decodes entities in s, an HTML fragment from a
// JSON API ("<strong>Go</strong> &amp; co" is "Go & co").
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			if breaksWords(atom.Lookup(name)) {
				b.WriteByte(' ')
			}
		}
	}
}

// breaksWords tells the tags that separate words from the inline ones that
// may sit inside a word ("<strong>Obsidian</strong>'s").
func breaksWords(a atom.Atom) bool {
	switch a {
	case atom.Br, atom.P, atom.Div, atom.Li, atom.Tr, atom.Td, atom.H1, atom.H2, atom.H3:
		return true
	}
	return false
}

// shortenQuery keeps query within a service's documented limits: at most
// maxWords words and maxRunes runes, cut at a word boundary.
func shortenQuery(query string, maxRunes, maxWords int) string {
	words := strings.Fields(query)
	if len(words) > maxWords {
		words = words[:maxWords]
	}
	q := strings.Join(words, " ")
	for utf8.RuneCountInString(q) > maxRunes {
		i := strings.LastIndexByte(q, ' ')
		if i <= 0 {
			return string([]rune(q)[:maxRunes])
		}
		q = q[:i]
	}
	return q
}
