package markdown

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// Chunk is one piece of a note's body: the unit that is embedded and searched.
type Chunk struct {
	Ordinal int // 0-based within the note
	// HeadingPath is the chain of H1–H3 headings enclosing the chunk's first
	// byte, joined with " > " ("Setup > Install"); "" before the first
	// heading. Deeper headings neither split sections nor appear here.
	HeadingPath string
	Body        string // the chunk's markdown, leading blank lines and trailing whitespace trimmed
	Tokens      int    // EstimateTokens(Body)
}

// ChunkOptions sizes chunks in estimated tokens. Fields ≤ 0 take the
// DefaultChunkOptions value; then TargetTokens is capped at MaxTokens and
// MinTokens at TargetTokens.
type ChunkOptions struct {
	TargetTokens int // the size the pieces of an oversized section aim for
	MinTokens    int // a section or piece smaller than this joins a neighbour
	MaxTokens    int // no chunk is larger
}

// DefaultChunkOptions returns the sizes the index uses.
func DefaultChunkOptions() ChunkOptions {
	return ChunkOptions{TargetTokens: 1000, MinTokens: 100, MaxTokens: 2000}
}

func (o ChunkOptions) withDefaults() ChunkOptions {
	d := DefaultChunkOptions()
	if o.TargetTokens <= 0 {
		o.TargetTokens = d.TargetTokens
	}
	if o.MinTokens <= 0 {
		o.MinTokens = d.MinTokens
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = d.MaxTokens
	}
	o.TargetTokens = min(o.TargetTokens, o.MaxTokens)
	o.MinTokens = min(o.MinTokens, o.TargetTokens)
	return o
}

// bytesPerToken is the estimate's ratio: about right for English prose and
// markdown with common BPE tokenizers, and for CJK text (three bytes a
// character) it errs less than counting characters or words would.
const bytesPerToken = 4

// EstimateTokens estimates the tokens in s as one per four bytes of UTF-8,
// rounded up. It is cheap and additive, so any text of at most 4·n bytes is at
// most n tokens.
func EstimateTokens(s string) int {
	return (len(s) + bytesPerToken - 1) / bytesPerToken
}

// ChunkID is a chunk's stable id: the first 16 hex digits of the SHA-256 of
// docID, a NUL byte, headingPath, a NUL byte and the ordinal in decimal.
func ChunkID(docID, headingPath string, ordinal int) string {
	sum := sha256.Sum256([]byte(docID + "\x00" + headingPath + "\x00" + strconv.Itoa(ordinal)))
	return hex.EncodeToString(sum[:8])
}

// ChunkBody cuts a note body (Note.Body) into chunks:
//
//  1. one section per top-level H1, H2 or H3 heading, running to the next,
//     plus the text before the first heading; whitespace-only sections go;
//  2. a section under MinTokens joins the chunk before it (the first one,
//     when it is small, joins the next);
//  3. a chunk over MaxTokens is cut where blocks begin (paragraphs, list
//     items, quotes, code blocks; never inside a code block and never
//     between a heading and its first block); a single block still over
//     MaxTokens, such as a long paragraph or code block, is cut at sentence
//     ends and line breaks, then between words, then between characters.
//     Pieces are packed greedily up to TargetTokens, and a piece under
//     MinTokens joins a neighbour when the two fit in MaxTokens.
//
// A body too costly to parse as markdown (see Note.PlainText) is plain
// text: one section with no heading, whose blocks are its paragraphs, the
// runs of lines between blank lines.
//
// The result is deterministic, every chunk is at most MaxTokens, and the
// chunks together hold all of the body's non-whitespace text in order. An
// empty or blank body has no chunks. Note.Chunks gives the same chunks
// without parsing the body again.
func ChunkBody(body string, opts ChunkOptions) []Chunk {
	return parseMarkup(body, 1).chunks(opts)
}

// chunks cuts the parsed text into chunks as ChunkBody describes.
func (m *markup) chunks(opts ChunkOptions) []Chunk {
	c := chunker{m: m, o: opts.withDefaults()}
	c.blockStarts = c.m.blockStarts()
	secs := c.m.sections()
	var chunks []Chunk
	for _, s := range c.mergeRunts(secs) {
		for _, p := range c.split(s, cutBlocks) {
			t := c.trim(p)
			if t.start == t.end {
				continue
			}
			text := m.body[t.start:t.end]
			chunks = append(chunks, Chunk{
				Ordinal:     len(chunks),
				HeadingPath: pathAt(secs, t.start),
				Body:        text,
				Tokens:      EstimateTokens(text),
			})
		}
	}
	return chunks
}

// span is a byte range [start, end) of the body.
type span struct{ start, end int }

// section is the body text from one heading (or the start) to the next.
type section struct {
	span
	path string
}

type chunker struct {
	m           *markup
	o           ChunkOptions
	blockStarts []int // sorted line starts where a block may begin a piece
}

// Cut levels, coarsest first.
const (
	cutBlocks = iota
	cutSentences
	cutWords
	cutRunes
)

// sections splits the body at its top-level H1–H3 headings. Plain text is
// one section.
func (m *markup) sections() []section {
	type heading struct {
		level int
		text  string
	}
	var (
		secs  []section
		stack []heading
		cur   section
	)
	var first ast.Node
	if m.root != nil {
		first = m.root.FirstChild()
	}
	for n := first; n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok || h.Level > 3 {
			continue
		}
		at := m.lineStart(h.Pos())
		if at > cur.start {
			cur.end = at
			secs = append(secs, cur)
		}
		for len(stack) > 0 && stack[len(stack)-1].level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, heading{h.Level, plainText(m.src, h)})
		var names []string
		for _, s := range stack {
			if s.text != "" {
				names = append(names, s.text)
			}
		}
		cur = section{span: span{start: at}, path: strings.Join(names, " > ")}
	}
	if cur.end = len(m.src); cur.end > cur.start {
		secs = append(secs, cur)
	}
	return secs
}

// pathAt is the heading path of the section holding byte pos. secs are in
// order and the first starts at 0, so one holds every offset in the body.
func pathAt(secs []section, pos int) string {
	return secs[sort.Search(len(secs), func(i int) bool { return secs[i].start > pos })-1].path
}

// blockStarts returns the sorted line starts of all blocks, nested ones too,
// except a block that directly follows a heading: a heading stays with its
// first block. The blocks of plain text are its paragraphs.
func (m *markup) blockStarts() []int {
	if m.root == nil {
		return m.paragraphStarts()
	}
	var starts []int
	_ = ast.Walk(m.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n.Type() != ast.TypeBlock || n == m.root {
			return ast.WalkContinue, nil
		}
		if _, afterHeading := n.PreviousSibling().(*ast.Heading); !afterHeading && n.Pos() >= 0 {
			starts = append(starts, m.lineStart(n.Pos()))
		}
		return ast.WalkContinue, nil
	})
	slices.Sort(starts)
	return slices.Compact(starts)
}

// paragraphStarts returns the starts of the lines that follow a blank line
// or begin the text and are not blank themselves.
func (m *markup) paragraphStarts() []int {
	var starts []int
	blank := true
	for i, at := range m.lines {
		end := len(m.src)
		if i+1 < len(m.lines) {
			end = m.lines[i+1]
		}
		if b := util.IsBlank(m.src[at:end]); b != blank {
			if blank {
				starts = append(starts, at)
			}
			blank = b
		}
	}
	return starts
}

// mergeRunts drops blank sections and joins each small section to the one
// before it, and a small first section to the one after it.
func (c *chunker) mergeRunts(secs []section) []span {
	var out []span
	for _, s := range secs {
		if t := c.trim(s.span); t.start == t.end {
			continue
		}
		if n := len(out); n > 0 && c.tokens(s.span) < c.o.MinTokens {
			out[n-1].end = s.end
			continue
		}
		out = append(out, s.span)
	}
	if len(out) > 1 && c.tokens(out[0]) < c.o.MinTokens {
		out[1].start = out[0].start
		out = out[1:]
	}
	return out
}

// split cuts s into pieces of at most MaxTokens, using the boundaries of
// level and, for a piece still too large, of the finer levels.
func (c *chunker) split(s span, level int) []span {
	if rawTokens(s) <= c.o.MaxTokens {
		return []span{s}
	}
	var pieces []span
	for _, p := range pack(s, c.cuts(s, level), c.o.TargetTokens) {
		if rawTokens(p) > c.o.MaxTokens {
			pieces = append(pieces, c.split(p, level+1)...)
		} else {
			pieces = append(pieces, p)
		}
	}
	var out []span
	for _, p := range pieces {
		n := len(out)
		if n > 0 && (c.tokens(p) < c.o.MinTokens || c.tokens(out[n-1]) < c.o.MinTokens) &&
			rawTokens(span{out[n-1].start, p.end}) <= c.o.MaxTokens {
			out[n-1].end = p.end
			continue
		}
		out = append(out, p)
	}
	return out
}

// pack groups the stretches between cuts greedily into pieces of at most
// target tokens; a stretch larger than target on its own is one piece.
func pack(s span, cuts []int, target int) []span {
	var out []span
	start, i := s.start, 0
	for rawTokens(span{start, s.end}) > target && i < len(cuts) {
		end := cuts[i]
		for i++; i < len(cuts) && rawTokens(span{start, cuts[i]}) <= target; i++ {
			end = cuts[i]
		}
		out = append(out, span{start, end})
		start = end
	}
	return append(out, span{start, s.end})
}

// cuts returns the sorted offsets strictly inside s where a piece may begin
// at the given level.
func (c *chunker) cuts(s span, level int) []int {
	src := c.m.src
	var cuts []int
	add := func(at int) {
		if at > s.start && at < s.end {
			cuts = append(cuts, at)
		}
	}
	switch level {
	case cutBlocks:
		first, _ := slices.BinarySearch(c.blockStarts, s.start+1)
		for _, at := range c.blockStarts[first:] {
			if at >= s.end {
				break
			}
			add(at)
		}
	case cutSentences:
		for i := s.start; i < s.end; i++ {
			switch {
			case src[i] == '\n':
				add(i + 1)
			case (src[i] == '.' || src[i] == '!' || src[i] == '?') && !c.m.code[i]:
				j := i + 1
				for j < s.end && isASCIISpace(src[j]) {
					j++
				}
				if j > i+1 {
					add(j)
				}
			}
		}
		for i := s.start; i < s.end; {
			r, size := utf8.DecodeRune(src[i:s.end])
			if (r == '。' || r == '！' || r == '？') && !c.m.code[i] {
				add(i + size)
			}
			i += size
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
	case cutWords:
		prevSpace := false
		for i := s.start; i < s.end; {
			r, size := utf8.DecodeRune(src[i:s.end])
			space := unicode.IsSpace(r)
			if prevSpace && !space {
				add(i)
			}
			prevSpace = space
			i += size
		}
	default:
		for i := s.start; i < s.end; {
			_, size := utf8.DecodeRune(src[i:s.end])
			add(i)
			i += size
		}
	}
	return cuts
}

// rawTokens estimates the tokens of a span before trimming: an upper bound
// for the chunk it becomes.
func rawTokens(s span) int {
	return (s.end - s.start + bytesPerToken - 1) / bytesPerToken
}

// tokens estimates the tokens of the chunk a span becomes.
func (c *chunker) tokens(s span) int {
	t := c.trim(s)
	return rawTokens(t)
}

// trim drops a span's leading blank lines and trailing whitespace: what is
// left is the chunk's text. Leading spaces on the first kept line stay: they
// may make it an indented code block.
func (c *chunker) trim(s span) span {
	t := c.m.src[s.start:s.end]
	lead := 0
	for i, b := range t {
		if b == '\n' {
			lead = i + 1
		} else if !isASCIISpace(b) {
			break
		}
	}
	kept := bytes.TrimRightFunc(t[lead:], unicode.IsSpace)
	return span{s.start + lead, s.start + lead + len(kept)}
}
