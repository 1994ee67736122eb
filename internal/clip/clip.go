package clip

import (
	"strings"
	"unicode/utf8"
)

// Mark ends text that was cut, so a reader (or a model) sees it goes on.
const Mark = "…"

// Prefix is the longest prefix of s holding at most n runes, and whether
// that is all of s. It counts as utf8.RuneCountInString does, an invalid
// byte as one rune, so the prefix is always bytes of s, never a rewrite.
func Prefix(s string, n int) (prefix string, whole bool) {
	end := 0
	for range max(n, 0) {
		if end == len(s) {
			break
		}
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	return s[:end], end == len(s)
}

// Text returns s when it holds at most max runes. Otherwise it returns the
// first max-1 runes of s followed by Mark: cut back to the last byte of
// breaks among them (a space: at a word) when that falls in their second
// half, so a short text is never cut down to a word or two, and cut hard
// when breaks is empty. A max below 1 gives "".
func Text(s string, max int, breaks string) string {
	if max < 1 {
		return ""
	}
	if _, whole := Prefix(s, max); whole {
		return s
	}
	cut, _ := Prefix(s, max-1)
	if i := strings.LastIndexAny(cut, breaks); i > len(cut)/2 {
		cut = cut[:i]
	}
	return cut + Mark
}
