package rag

import (
	"context"
	"fmt"
	"math"
	"slices"
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

// Thin reports whether the vault's coverage is thin: fewer than thinHits
// hits within thinDistance of the query embedding, that is, ThinStatistic
// above thinDistance. Only vector distance counts: a fused RRF score ranks
// hits but says nothing about whether any of them is relevant. Hits
// without a distance never count, so too few of them (a statistic of +Inf)
// is thin at any thinDistance.
func Thin(hits []Hit, thinHits int, thinDistance float64) bool {
	stat := ThinStatistic(hits, thinHits)
	return stat > thinDistance || math.IsInf(stat, 1)
}

// ThinStatistic is the one number Thin compares with thin_distance: the
// thinHits-th smallest distance among hits, +Inf when fewer than thinHits
// hits have a distance, -Inf when thinHits is below 1 (coverage is then
// never thin). It is exported so that placing thin_distance (eval
// web-trigger) reads the very value the trigger does.
func ThinStatistic(hits []Hit, thinHits int) float64 {
	if thinHits < 1 {
		return math.Inf(-1)
	}
	var ds []float64
	for _, h := range hits {
		if h.HasDistance && !math.IsNaN(h.Distance) {
			ds = append(ds, h.Distance)
		}
	}
	if len(ds) < thinHits {
		return math.Inf(1)
	}
	slices.Sort(ds)
	return ds[thinHits-1]
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
