package markdown

import (
	"fmt"
	"strings"
)

// hostileInputs are texts that make a CommonMark parser do far more work than
// their size suggests, each built at about the size asked for. Most are
// quadratic in goldmark v1.8.7; html-openers, html-tags and list-items are
// linear but heavy per byte; long-line is linear and cheap, so it stays
// markdown at any size.
var hostileInputs = []struct {
	name     string
	gen      func(size int) string
	markdown bool // still parsed as markdown at 1MB
}{
	{"blockquote-line", func(n int) string { return repeatTo(">", n) }, false},
	{"list-line", func(n int) string { return repeatTo("- ", n) + "a" }, false},
	{"list-staircase", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(strings.Repeat("  ", i) + "- a\n")
		}
		return b.String()
	}, false},
	{"quote-list-line", func(n int) string { return repeatTo("> - ", n) + "a" }, false},
	{"brackets", func(n int) string { return repeatTo("[", n) }, false},
	{"images", func(n int) string { return repeatTo("![", n) }, false},
	{"nested-brackets", func(n int) string { return repeatTo("[", n/2) + "a" + repeatTo("]", n/2) }, false},
	{"unclosed-links", func(n int) string { return repeatTo("[a](b", n) }, false},
	{"emphasis-mismatch", func(n int) string { return repeatTo("*a_ ", n) }, false},
	{"emphasis-mismatch-lines", func(n int) string { return repeatTo("*a_\n", n) }, false},
	{"emphasis-rule-of-3", func(n int) string { return "a**b" + repeatTo("c* ", n) }, false},
	{"backticks", func(n int) string {
		var b strings.Builder
		for i := 1; b.Len() < n; i++ {
			b.WriteString("e" + strings.Repeat("`", i))
		}
		return b.String()
	}, false},
	{"html-openers", func(n int) string { return "</" + repeatTo("<!--", n) }, false},
	{"html-tags", func(n int) string { return repeatTo("<a ", n) }, false},
	{"link-definitions", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n/2; i++ {
			fmt.Fprintf(&b, "[%d]: u\n", i)
		}
		return b.String() + repeatTo("[0] ", n/2)
	}, false},
	{"long-line", func(n int) string { return repeatTo("word ", n) }, true},
	{"list-items", func(n int) string { return repeatTo("- a\n", n) }, false},
}

// hostileSeeds are the hostile inputs at a size goldmark parses quickly
// and at one where most are plain text, for the fuzz targets.
func hostileSeeds() []string {
	var out []string
	for _, in := range hostileInputs {
		out = append(out, in.gen(2_000), in.gen(64_000))
	}
	return out
}

// repeatTo repeats unit to about n bytes, at least once.
func repeatTo(unit string, n int) string {
	return strings.Repeat(unit, max(n/len(unit), 1))
}
