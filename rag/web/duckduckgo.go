package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// duckDuckGo searches DuckDuckGo's no-JavaScript HTML endpoint, which needs
// no key: a POSTed form, answered with a results page.
//
// The page shape, as the maintained scrapers read it (searxng
// searx/engines/duckduckgo.py; deedy5/duckduckgo_search _text_html):
//
//	<div id="links" class="results">
//	  <div class="result results_links results_links_deep web-result ">
//	    <h2 class="result__title">
//	      <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=<escaped URL>&amp;rut=…">Title <b>term</b></a>
//	    </h2>
//	    <a class="result__snippet" href="…">Snippet with <b>term</b></a>
//	  </div>
//	  <div class="result results_links results_links_deep result--ad ">…</div>   (an ad: skipped)
//	</div>
//
// A query without hits has <div class="no-results">; a throttled client gets
// status 202 or a page with <form id="challenge-form"> instead of results.
type duckDuckGo struct{ *client }

// maxDuckDuckGoQuery: the endpoint refuses queries of 500 characters or more
// (searxng's engine notes the same limit).
const maxDuckDuckGoQuery = 499

func (d *duckDuckGo) Search(ctx context.Context, query string, n int) ([]Result, error) {
	if err := d.check(query, n); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	form := url.Values{"q": {shortenQuery(query, maxDuckDuckGoQuery, maxDuckDuckGoQuery)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	// 202 is how the endpoint says "slow down", with no results in the page.
	body, err := d.fetch(req, func(status int) bool { return status == http.StatusOK })
	if err != nil {
		return nil, err
	}
	results, err := parseDuckDuckGo(body, n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	return results, nil
}

// parseDuckDuckGo reads at most n organic results from a results page. A
// page with neither results nor DuckDuckGo's "no results" notice is an error:
// a challenge, an empty body or markup this parser no longer understands.
func parseDuckDuckGo(page []byte, n int) ([]Result, error) {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return nil, fmt.Errorf("parse results page: %w", err)
	}
	if find(doc, func(e *html.Node) bool { return e.DataAtom == atom.Form && attr(e, "id") == "challenge-form" }) != nil {
		return nil, fmt.Errorf("got a bot challenge instead of results")
	}
	c := newCollector(n)
	for _, block := range resultBlocks(doc) {
		if c.full() {
			break
		}
		if hasClass(block, "result--ad") {
			continue
		}
		link := find(block, func(e *html.Node) bool { return e.DataAtom == atom.A && hasClass(e, "result__a") })
		if link == nil {
			continue
		}
		snippet := ""
		if s := find(block, func(e *html.Node) bool { return hasClass(e, "result__snippet") }); s != nil {
			snippet = text(s)
		}
		c.add(text(link), unwrapRedirect(attr(link, "href")), snippet)
	}
	if len(c.out) == 0 && find(doc, func(e *html.Node) bool { return hasClass(e, "no-results") }) == nil {
		return nil, fmt.Errorf("no results found in the page (blocked, empty, or changed markup)")
	}
	return c.out, nil
}

// unwrapRedirect returns the target of DuckDuckGo's click-through link
// (//duckduckgo.com/l/?uddg=<escaped target>&rut=…), href itself when it
// points elsewhere, and "" for any other DuckDuckGo link (ads go through
// duckduckgo.com/y.js).
func unwrapRedirect(href string) string {
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return ""
	}
	if u.Scheme == "" && u.Host != "" {
		u.Scheme = "https"
	}
	host := strings.ToLower(u.Hostname())
	if host != "duckduckgo.com" && !strings.HasSuffix(host, ".duckduckgo.com") {
		return u.String()
	}
	if u.Path != "/l/" && u.Path != "/l" {
		return ""
	}
	return u.Query().Get("uddg")
}

// resultBlocks returns the outermost elements of class "result", in document
// order.
func resultBlocks(n *html.Node) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && hasClass(c, "result") {
			out = append(out, c)
			continue
		}
		out = append(out, resultBlocks(c)...)
	}
	return out
}

// find returns the first element under n (n included) that match accepts,
// depth first.
func find(n *html.Node, match func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, match); f != nil {
			return f
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), class)
}

// text is the text content of n, entities already decoded by the parser;
// tags that separate words count as spaces.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
		case html.ElementNode:
			if n.DataAtom == atom.Script || n.DataAtom == atom.Style {
				return
			}
			if breaksWords(n.DataAtom) {
				b.WriteByte(' ')
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
