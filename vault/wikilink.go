package vault

import "bytes"

// Wikilink is one [[...]] or ![[...]] in a note's text, as Obsidian finds
// it: the index takes it as a link out of the note, and rag shows it as its
// text.
type Wikilink struct {
	Start, End int    // its bytes in the text, an embed's '!' included
	Inner      string // what stands between the brackets, untrimmed
	Embed      bool   // ![[...]]
}

// Wikilinks returns the wikilinks of src in order, leaving out any that
// touches code: code[i] reports whether byte i is in a code block or span,
// where a [[link]] is an example of syntax (nil: there is no code). A
// wikilink stays on one line; with nested openers ("[[a [[b]]") the
// innermost wins, as in Obsidian. Inner may name nothing ("[[]]",
// "[[|alias]]"); what that means is the caller's to say.
func Wikilinks(src []byte, code []bool) []Wikilink {
	isCode := func(i int) bool { return i < len(code) && code[i] }
	var out []Wikilink
	for i := 0; i+1 < len(src); {
		if src[i] != '[' || src[i+1] != '[' || isCode(i) {
			i++
			continue
		}
		closer, opener := wikilinkEnd(src, i+2)
		switch {
		case closer < 0:
			i = lineEnd(src, i)
			continue
		case opener >= 0:
			i = opener
			continue
		}
		l := Wikilink{Start: i, End: closer + 2, Inner: string(src[i+2 : closer])}
		if i > 0 && src[i-1] == '!' && !isCode(i-1) {
			l.Start, l.Embed = i-1, true
		}
		i = l.End
		if !anyCode(code, l.Start, l.End) {
			out = append(out, l)
		}
	}
	return out
}

// wikilinkEnd scans from just after a "[[" to the first "]]" on the line and
// returns its offset, or -1 when the line has none, and the offset of the
// last "[[" before it, or -1.
func wikilinkEnd(s []byte, from int) (closer, opener int) {
	opener = -1
	for j := from; j < len(s) && s[j] != '\n'; j++ {
		switch {
		case j+1 < len(s) && s[j] == ']' && s[j+1] == ']':
			return j, opener
		case j+1 < len(s) && s[j] == '[' && s[j+1] == '[':
			opener = j
		}
	}
	return -1, -1
}

// anyCode reports whether any byte of [start, end) is code.
func anyCode(code []bool, start, end int) bool {
	for i := max(start, 0); i < min(end, len(code)); i++ {
		if code[i] {
			return true
		}
	}
	return false
}

// lineEnd is the offset of the newline ending the line holding s[pos], or
// len(s) on the last line.
func lineEnd(s []byte, pos int) int {
	if i := bytes.IndexByte(s[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(s)
}
