package markdown

import (
	"fmt"
	"strings"
)

// hostileInputs are texts that make a CommonMark parser do far more work than
// their size suggests, each built at about the size asked for. Most are
// quadratic in goldmark v1.8.7; the last few are linear but heavy per byte.
var hostileInputs = []struct {
	name string
	gen  func(size int) string
}{
	{"blockquote-line", func(n int) string { return repeatTo(">", n) }},
	{"list-line", func(n int) string { return repeatTo("- ", n) + "a" }},
	{"list-staircase", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(strings.Repeat("  ", i) + "- a\n")
		}
		return b.String()
	}},
	{"quote-list-line", func(n int) string { return repeatTo("> - ", n) + "a" }},
	{"brackets", func(n int) string { return repeatTo("[", n) }},
	{"images", func(n int) string { return repeatTo("![", n) }},
	{"nested-brackets", func(n int) string { return repeatTo("[", n/2) + "a" + repeatTo("]", n/2) }},
	{"unclosed-links", func(n int) string { return repeatTo("[a](b", n) }},
	{"emphasis-mismatch", func(n int) string { return repeatTo("*a_ ", n) }},
	{"emphasis-mismatch-lines", func(n int) string { return repeatTo("*a_\n", n) }},
	{"emphasis-rule-of-3", func(n int) string { return "a**b" + repeatTo("c* ", n) }},
	{"backticks", func(n int) string {
		var b strings.Builder
		for i := 1; b.Len() < n; i++ {
			b.WriteString("e" + strings.Repeat("`", i))
		}
		return b.String()
	}},
	{"html-openers", func(n int) string { return "</" + repeatTo("<!--", n) }},
	{"html-tags", func(n int) string { return repeatTo("<a ", n) }},
	{"link-definitions", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n/2; i++ {
			fmt.Fprintf(&b, "[%d]: u\n", i)
		}
		return b.String() + repeatTo("[0] ", n/2)
	}},
	{"long-line", func(n int) string { return repeatTo("word ", n) }},
	{"list-items", func(n int) string { return repeatTo("- a\n", n) }},
}

// repeatTo repeats unit to about n bytes, at least once.
func repeatTo(unit string, n int) string {
	return strings.Repeat(unit, max(n/len(unit), 1))
}
