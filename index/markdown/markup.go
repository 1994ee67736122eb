package markdown

import (
	"bytes"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// commonMark parses plain CommonMark, no extensions: the table extension
// would split [[target|alias]] at its pipe. A goldmark parser is safe for
// concurrent use once built.
var commonMark = goldmark.DefaultParser()

// markup is one markdown text parsed once: goldmark's tree over it and a mask
// of the bytes that are code, where links, tags and sentence ends mean
// nothing. A text too costly to parse (see tooCostly) is plain text: no
// tree, no code, no headings; its blocks are the runs of lines between
// blank lines.
type markup struct {
	body  string   // the text, for slicing chunks out of it without copies
	src   []byte   // the text as goldmark reads it
	root  ast.Node // nil for plain text
	plain string   // why the text is plain text, "" when it is markdown
	code  []bool   // code[i] is true when byte i is in a code block or code span
	lines []int    // the offset of each line's first byte, in order
}

// parseMarkup parses body, whose first line is line firstLine of its note
// (for the reason a costly text is plain text).
func parseMarkup(body string, firstLine int) *markup {
	m := plainMarkup(body)
	if m.plain = tooCostly(m.src, firstLine); m.plain != "" {
		return m
	}
	m.root = commonMark.Parse(text.NewReader(m.src))
	_ = ast.Walk(m.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			m.mark(n.Pos(), m.codeBlockEnd(n))
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			m.mark(n.Pos(), m.codeSpanEnd(n))
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return m
}

// plainMarkup is body as plain text.
func plainMarkup(body string) *markup {
	m := &markup{body: body, src: []byte(body), code: make([]bool, len(body)), lines: []int{0}}
	for i, b := range m.src {
		if b == '\n' {
			m.lines = append(m.lines, i+1)
		}
	}
	return m
}

// mark sets the code mask over [start, end), clamped to the source.
func (m *markup) mark(start, end int) {
	for i := max(start, 0); i < min(end, len(m.src)); i++ {
		m.code[i] = true
	}
}

// codeBlockEnd is where a code block's text ends: the end of its opening line
// (which holds a fence's info string) or of its last content line, whichever
// is later. A closing fence holds only fence characters, so it needs no mask.
func (m *markup) codeBlockEnd(n ast.Node) int {
	end := lineEnd(m.src, n.Pos())
	if lines := n.Lines(); lines.Len() > 0 {
		end = max(end, lines.At(lines.Len()-1).Stop)
	}
	return end
}

// codeSpanEnd is the end of a code span's closing backtick run: the first run
// after its content as long as the opening run at n.Pos().
func (m *markup) codeSpanEnd(n *ast.CodeSpan) int {
	start := max(n.Pos(), 0)
	ticks := 0
	for start+ticks < len(m.src) && m.src[start+ticks] == '`' {
		ticks++
	}
	i := start + ticks
	if t, ok := n.LastChild().(*ast.Text); ok {
		i = max(i, t.Segment.Stop)
	}
	for i < len(m.src) {
		run := i
		for i < len(m.src) && m.src[i] == '`' {
			i++
		}
		if i-run == ticks {
			break
		}
		if i == run {
			i++
		}
	}
	return i
}

// inCode reports whether any byte of [start, end) is code.
func (m *markup) inCode(start, end int) bool {
	for i := max(start, 0); i < min(end, len(m.src)); i++ {
		if m.code[i] {
			return true
		}
	}
	return false
}

// lineStart is the offset of the start of the line holding src[pos].
func (m *markup) lineStart(pos int) int {
	i, found := slices.BinarySearch(m.lines, pos)
	if found {
		return pos
	}
	return m.lines[max(i-1, 0)]
}

// lineEnd is the offset of the newline ending the line holding src[pos], or
// len(src) on the last line.
func lineEnd(src []byte, pos int) int {
	pos = min(max(pos, 0), len(src))
	if i := bytes.IndexByte(src[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(src)
}

// plainText is the visible text of an inline container such as a heading or
// a link: its text nodes joined, markup dropped, whitespace collapsed.
func plainText(src []byte, n ast.Node) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(b.String()), " ")
}
