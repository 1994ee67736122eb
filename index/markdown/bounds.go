package markdown

import (
	"fmt"
	"unicode/utf8"

	"github.com/yuin/goldmark/util"
)

// goldmark v1.8.7 does far more work than a text's size suggests on some
// inputs (BenchmarkHostile measures them): opening blocks nested on one line
// is quadratic in the depth; emphasis markers that cannot pair up, backtick
// runs that close no code span, link destinations that never end, link
// reference definitions and brackets around much other markup are quadratic
// in their paragraph or line; and every node costs up to a microsecond, so
// a megabyte of list items or brackets takes most of a second. tooCostly
// bounds that work before goldmark sees the text, in one linear pass that
// estimates what goldmark would do. Long lines of prose, raw HTML,
// autolinks, entities and escapes are linear and cheap, so no bound of
// their own is needed.

// maxNesting is how many blocks (quotes and list items) one line may open or
// continue. Opening d blocks on a line costs goldmark about d² steps; the
// notes of the Obsidian Help and Hub vaults nest at most 10 deep by the
// count below, which errs high (a tab counts two levels); markdown-it's
// CommonMark preset stops at 20.
const maxNesting = 32

// The work budget, in parsing steps of about a nanosecond each on the
// machine BenchmarkHostile ran on. A note may cost budgetFloor steps, or
// budgetPerByte steps a byte when that is more, so no note costs much more
// than 100 ms up to a megabyte and the cost stays linear beyond: each
// hostile input at the largest size within the budget took goldmark 13 to
// 95 ms. Real notes stay well below: the costliest notes of the Help and
// Hub vaults, lists of 300 KB and 134 KB full of links, are estimated at
// 22% and 20% of their budget, and all others at 5% or less.
const (
	budgetFloor   = 100_000_000
	budgetPerByte = 100
)

// The cost of one unit of each kind of work, in steps, measured on the
// hostile inputs: a node goldmark allocates and walks (a line, a quote or
// list marker, an inline marker), a step of matching emphasis markers, a
// byte scanned for the end of a code span or link destination, a node
// visited while checking a bracket for links inside it, and a line moved
// when a link reference definition is taken out of its paragraph.
const (
	nodeSteps       = 600
	emphasisSteps   = 6
	codeScanSteps   = 1
	destScanSteps   = 6
	visitSteps      = 8
	definitionSteps = 1
)

// labelWindow is the span of open brackets within which goldmark checks a
// closing bracket's text for links: a link label holds at most 999
// characters, so farther brackets are dropped without that walk.
const labelWindow = 999

// The kinds of work the budget counts, each named in the reason it gives.
const (
	workMarkup = iota
	workEmphasis
	workCodeSpans
	workBrackets
	workDestinations
	workDefinitions
	workKinds
)

var workNames = [workKinds]string{
	workMarkup:       "markup (lines, quote and list markers, brackets, emphasis and code marks)",
	workEmphasis:     "emphasis markers (* and _) that may not pair up",
	workCodeSpans:    "backtick runs of many lengths",
	workBrackets:     "brackets around much other markup",
	workDestinations: "link destinations with no end",
	workDefinitions:  "link reference definitions",
}

var workWeights = [workKinds]int64{
	workMarkup:       nodeSteps,
	workEmphasis:     emphasisSteps,
	workCodeSpans:    codeScanSteps,
	workBrackets:     visitSteps,
	workDestinations: destScanSteps,
	workDefinitions:  definitionSteps,
}

// tooCostly returns why parsing src as markdown would cost too much, naming
// the construct and the line (firstLine being the number of src's first
// line), or "" when it is within bounds. The estimates are upper bounds of
// goldmark's work whatever it makes of the text, so that no construct can
// hide work from them: a paragraph here is a run of non-blank lines up to a
// line that surely begins a list item, which holds every paragraph or
// heading goldmark may find there, and markup it would take as code, HTML
// or a link destination still counts.
func tooCostly(src []byte, firstLine int) string {
	w := workScan{src: src, nextSpace: -1, nextAngle: -1, ticks: map[int]bool{}}
	for at, line := 0, firstLine; at < len(src) || at == 0; line++ {
		end := lineEnd(src, at)
		if depth := w.line(at, end, line); depth > maxNesting {
			return fmt.Sprintf("line %d nests %d block levels (limit %d): indexed as plain text", line, depth, maxNesting)
		}
		if end == len(src) {
			break
		}
		at = end + 1
	}
	w.endParagraph()
	budget := max(budgetFloor, budgetPerByte*int64(len(src)))
	var total int64
	worst := 0
	for k := range workKinds {
		total += w.steps[k]
		if w.steps[k] > w.steps[worst] {
			worst = k
		}
	}
	if total <= budget {
		return ""
	}
	return fmt.Sprintf("%s, most in the paragraph at line %d, would take about %d parsing steps (limit %d): indexed as plain text",
		workNames[worst], w.worstLine[worst], total, budget)
}

// workScan is tooCostly's pass over the text: totals for the whole text and
// counts for the paragraph being read.
type workScan struct {
	src       []byte
	maxDepth  int // the deepest any line has nested so far
	steps     [workKinds]int64
	worstLine [workKinds]int   // the first line of the paragraph that cost most
	worstPara [workKinds]int64 // what that paragraph cost

	// Each is the offset of the first space or line end (nextSpace), or
	// of the first '>' or line end (nextAngle), at or after the offset it
	// was last looked up from; -1 before the first look-up. Destinations
	// are looked up in increasing order, so each pointer moves forward
	// only and the look-ups cost linear time in all.
	nextSpace, nextAngle int

	// The paragraph being read.
	inPara      bool
	paraLine    int
	paraStart   int
	paraEnd     int
	paraLines   int64
	work        [workKinds]int64
	nodes       int64
	delims      int64        // emphasis marker runs that may open or close
	ticks       map[int]bool // the lengths of its backtick runs
	opens       int64        // its '['
	closes      int64        // its ']'
	window      []int        // the offsets of its last '[' within labelWindow bytes
	windowMax   int64        // the most '[' found within labelWindow bytes
	definitions int64        // lines that may begin a link reference definition
}

// line reads the line src[at:end], numbered n, and returns how deep it
// nests.
func (w *workScan) line(at, end, n int) int {
	s := w.src[at:end]
	if util.IsBlank(s) {
		w.endParagraph()
		return 0
	}
	if w.inPara && startsItem(s) {
		w.endParagraph()
	}
	if !w.inPara {
		w.inPara, w.paraLine, w.paraStart = true, n, at
	}
	w.paraEnd = end
	w.paraLines++
	markers, indent, content := containerPrefix(s)
	// Indentation continues the blocks earlier lines opened, two columns or
	// more a list level, and no deeper than they went.
	depth := markers + min(indent/2, w.maxDepth)
	w.maxDepth = max(w.maxDepth, depth)
	// A line is a text node at least; each marker opens a block that holds
	// a paragraph and its text; each level it continues is checked.
	w.nodes += 1 + 3*int64(markers) + int64(depth)
	if content < len(s) && s[content] == '[' {
		w.definitions++
	}
	w.inline(at+content, end)
	return depth
}

// startsItem reports whether a line surely begins a list item wherever it
// stands, so that no paragraph goes on across it: a marker that may
// interrupt a paragraph ('-', '+' or '*', or "1." or "1)") indented less
// than an indented code block, with text after it. A line of a quote need
// not begin a paragraph and is not one.
func startsItem(s []byte) bool {
	i := 0
	for i < len(s) && i < 3 && s[i] == ' ' {
		i++
	}
	n := markerLen(s[i:], i >= thematicTail(s))
	if n == 0 || s[i] == '>' || (s[i] >= '0' && s[i] <= '9' && (n != 2 || s[i] != '1')) {
		return false
	}
	return !util.IsBlank(s[i+n:])
}

// containerPrefix reads the quote and list markers that begin a line: how
// many there are, the columns of indentation among them, and where the
// line's content begins.
func containerPrefix(s []byte) (markers, indent, content int) {
	tail := thematicTail(s)
	col, i := 0, 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			if s[i] == '\t' {
				indent += 4 - col%4
				col += 4 - col%4
			} else {
				indent++
				col++
			}
			i++
		}
		n := markerLen(s[i:], i >= tail)
		if n == 0 {
			return markers, indent, i
		}
		markers++
		i += n
		col += n
	}
}

// thematicTail is where the line's last run of one byte, spaces and tabs
// between, begins: only from there on may the rest of the line be a
// thematic break.
func thematicTail(s []byte) int {
	i := len(s)
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if i == 0 {
		return 0
	}
	c := s[i-1]
	for i > 0 && (s[i-1] == c || s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	return i
}

// markerLen is the length of the quote marker or list marker s begins with,
// or 0. inTail says s lies in its line's thematic tail: then three or more
// '-' or '*' among spaces are a thematic break, not list markers.
func markerLen(s []byte, inTail bool) int {
	if len(s) == 0 {
		return 0
	}
	n := 0
	switch c := s[0]; {
	case c == '>':
		return 1
	case c == '-' || c == '+' || c == '*':
		if c != '+' && inTail && hasThree(s, c) {
			return 0
		}
		n = 1
	case c >= '0' && c <= '9':
		for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == len(s) || (s[n] != '.' && s[n] != ')') {
			return 0
		}
		n++
	default:
		return 0
	}
	if n < len(s) && s[n] != ' ' && s[n] != '\t' {
		return 0
	}
	return n
}

// hasThree reports whether s holds c three times. It stops at the third, so
// asking it of each marker of a thematic tail costs linear time: it fails
// only for the last two markers.
func hasThree(s []byte, c byte) bool {
	n := 0
	for _, b := range s {
		if b == c {
			if n++; n == 3 {
				return true
			}
		}
	}
	return false
}

// inline counts the inline markup of src[at:end], one line's content.
func (w *workScan) inline(at, end int) {
	s := w.src
	for i := at; i < end; i++ {
		switch c := s[i]; c {
		case '\\':
			// An escaped character is text to goldmark, not markup.
			if i+1 < end {
				i++
			}
		case '`':
			j := runEnd(s, i, end)
			w.ticks[j-i] = true
			w.nodes++
			i = j - 1
		case '*', '_':
			j := runEnd(s, i, end)
			canOpen, canClose := flanking(s, i, j, c)
			// A closing run looks back for its opener over the runs
			// before it, at most all of them.
			if canClose {
				w.work[workEmphasis] += w.delims
			}
			if canOpen || canClose {
				w.delims++
			}
			w.nodes++
			i = j - 1
		case '[':
			w.opens++
			w.window = append(w.window, i)
			for w.window[0] < i-labelWindow {
				w.window = w.window[1:]
			}
			w.windowMax = max(w.windowMax, int64(len(w.window)))
			// A bracket is a node and, while open, a label state.
			w.nodes += 2
		case ']':
			w.closes++
			w.nodes++
			if i+1 < end && s[i+1] == '(' {
				w.work[workDestinations] += int64(w.destinationScan(i+2, end))
			}
		case '<':
			// Trying raw HTML and autolinks costs goldmark about two
			// nodes.
			w.nodes += 2
		}
	}
}

// runEnd is the end of the run of the byte at s[i], before end.
func runEnd(s []byte, i, end int) int {
	j := i
	for j < end && s[j] == s[i] {
		j++
	}
	return j
}

// flanking reports whether the run s[i:j] of c may open or close emphasis,
// by CommonMark's rules as goldmark applies them: by the characters before
// and after the run, a line's start and end counting as spaces.
func flanking(s []byte, i, j int, c byte) (canOpen, canClose bool) {
	before, after := '\n', '\n'
	if i > 0 {
		before, _ = utf8.DecodeLastRune(s[:i])
	}
	if j < len(s) {
		after, _ = utf8.DecodeRune(s[j:])
	}
	beforeSpace, afterSpace := util.IsSpaceRune(before), util.IsSpaceRune(after)
	beforePunct, afterPunct := util.IsPunctRune(before), util.IsPunctRune(after)
	left := !afterSpace && (!afterPunct || beforeSpace || beforePunct)
	right := !beforeSpace && (!beforePunct || afterSpace || afterPunct)
	if c == '_' {
		return left && (!right || beforePunct), right && (!left || afterPunct)
	}
	return left, right
}

// destinationScan is how far goldmark may scan for the end of a link
// destination that begins at s[at]: to a '>' when it begins with '<', else
// to a space; a line end stops both.
func (w *workScan) destinationScan(at, end int) int {
	for at < end && (w.src[at] == ' ' || w.src[at] == '\t') {
		at++
	}
	if at < end && w.src[at] == '<' {
		w.nextAngle = nextFrom(w.src, w.nextAngle, at, end, func(b byte) bool { return b == '>' })
		return w.nextAngle - at
	}
	w.nextSpace = nextFrom(w.src, w.nextSpace, at, end, func(b byte) bool { return b == ' ' || b == '\t' })
	return w.nextSpace - at
}

// nextFrom is the offset of the first byte of s[from:end] that stop accepts,
// or end; prev is the answer to an earlier look-up from at most from, which
// still holds when it is not before from.
func nextFrom(s []byte, prev, from, end int, stop func(byte) bool) int {
	if prev >= from && prev <= end {
		return prev
	}
	for from < end && !stop(s[from]) {
		from++
	}
	return from
}

// endParagraph adds the paragraph's work to the totals.
func (w *workScan) endParagraph() {
	if !w.inPara {
		return
	}
	size := int64(w.paraEnd - w.paraStart)
	w.work[workMarkup] = w.nodes
	// A backtick run that closes no code span scans to the end of its
	// paragraph; only the last run of each length can be one.
	w.work[workCodeSpans] = int64(len(w.ticks)) * size
	// A closing bracket has goldmark walk every node since its opening
	// bracket, when the other open brackets lie within labelWindow bytes:
	// so each node is walked for at most that many brackets.
	w.work[workBrackets] = w.nodes * min(w.opens, w.closes, w.windowMax+1)
	// Taking each definition out moves the lines after it.
	w.work[workDefinitions] = w.definitions * w.paraLines
	for k := range workKinds {
		cost := w.work[k] * workWeights[k]
		w.steps[k] += cost
		if cost > w.worstPara[k] {
			w.worstPara[k], w.worstLine[k] = cost, w.paraLine
		}
	}
	clear(w.ticks)
	w.inPara, w.paraLines, w.work, w.nodes, w.delims = false, 0, [workKinds]int64{}, 0, 0
	w.opens, w.closes, w.window, w.windowMax, w.definitions = 0, 0, w.window[:0], 0, 0
}
