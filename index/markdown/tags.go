package markdown

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// inlineTags returns the #tags written in the text, in order. A tag is '#'
// followed by letters, digits, marks, '_', '-' or '/', where the '#' starts
// the text or follows whitespace or one of ,;:!?*_~[>| or a '(' that does
// not open a markdown link's destination. So "# Title" (a heading marker),
// "a#b", "&#39;", "[x](#h)" and "\#x" hold no tag. Code, the insides of
// wikilinks ([[Note#Heading]]) and URLs (any word holding "://") are skipped.
func (m *markup) inlineTags(wikilinks []located) []string {
	s := m.src
	skip := slices.Clone(m.code)
	for _, l := range wikilinks {
		for i := l.start; i < l.end; i++ {
			skip[i] = true
		}
	}
	maskURLs(s, skip)
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '#' || skip[i] || !tagBoundary(s, i) {
			continue
		}
		end := i + 1
		for end < len(s) {
			r, size := utf8.DecodeRune(s[end:])
			if !isTagRune(r) {
				break
			}
			end += size
		}
		if tag, ok := normalizeTag(string(s[i+1 : end])); ok {
			out = append(out, tag)
		}
		i = end - 1
	}
	return out
}

// tagBoundary reports whether the '#' at s[i] may start a tag.
func tagBoundary(s []byte, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRune(s[:i])
	switch {
	case unicode.IsSpace(r):
		return true
	case r == '(':
		return i < 2 || s[i-2] != ']'
	default:
		return strings.ContainsRune(",;:!?*_~[>|", r)
	}
}

func isTagRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || r == '_' || r == '-' || r == '/'
}

// maskURLs marks in skip every whitespace-delimited word that holds "://".
func maskURLs(s []byte, skip []bool) {
	done := 0
	for {
		k := bytes.Index(s[done:], []byte("://"))
		if k < 0 {
			return
		}
		k += done
		start := k
		for start > done && !isASCIISpace(s[start-1]) {
			start--
		}
		end := k + 3
		for end < len(s) && !isASCIISpace(s[end]) {
			end++
		}
		for i := start; i < end; i++ {
			skip[i] = true
		}
		done = end
	}
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// normalizeTag strips the leading '#' signs and the surrounding spaces and
// slashes of a tag as written. It reports false for an empty tag and for a
// purely numeric one such as "123", which Obsidian does not take as a tag.
func normalizeTag(tag string) (string, bool) {
	tag = strings.TrimLeftFunc(tag, func(r rune) bool { return r == '#' || r == '/' || unicode.IsSpace(r) })
	tag = strings.TrimRightFunc(tag, func(r rune) bool { return r == '/' || unicode.IsSpace(r) })
	numeric := !strings.ContainsFunc(tag, func(r rune) bool { return r < '0' || r > '9' })
	return tag, tag != "" && !numeric
}

// splitTagList splits a frontmatter tags string at commas and whitespace.
func splitTagList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}
