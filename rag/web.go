package rag

import (
	"context"
	"fmt"
	"strings"
)

// WebSearcher is a web search provider. The pipeline holds one only when
// web.enabled, and calls it only for a request with AllowWeb, with the
// user's question or its standalone rewrite as the query: never note text.
type WebSearcher interface {
	Search(ctx context.Context, query string, n int) ([]WebResult, error)
}

// WebResult is one web search result, as plain text.
type WebResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// WebHeading heads the web part of an answer, apart from the vault's.
const WebHeading = "## From the web"

// renderWeb lists web results for the prompt: numbered, each with its URL,
// which is how the answer must cite them.
func renderWeb(results []WebResult) string {
	var b strings.Builder
	for i, r := range results {
		fmt.Fprintf(&b, "[%d] %s\nURL: %s\n%s\n\n", i+1, oneLine(r.Title, 200), r.URL, oneLine(r.Snippet, 600))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// webSection is the web part of an extractive answer: under its own
// heading, each result cited by its URL.
func webSection(results []WebResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", WebHeading)
	for _, r := range results {
		fmt.Fprintf(&b, "- %s — <%s>\n", oneLine(r.Title, 200), r.URL)
		if s := oneLine(r.Snippet, 600); s != "" {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	return b.String()
}
