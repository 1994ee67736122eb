package markdown

import (
	"bytes"
	"cmp"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"

	"github.com/vaultask/vaultask/vault"
)

// Link kinds.
const (
	KindWikilink = "wikilink" // an ordinary link: [[...]], ![[...]] or [text](note.md)
	KindTopic    = "topic"    // a link inside a clippings region of a topic note
)

// TopicFolder is the top-level vault folder whose notes have clippings
// regions. The match is on the path prefix and case-sensitive.
const TopicFolder = "99 topics/"

// Link is one link out of a note.
type Link struct {
	// Target is what the link names, passed through vault.NormalizeTarget: "Note"
	// or "Folder/Note" for [[Folder/Note.md]], "image.png" for an embedded
	// attachment. It is "" for a same-note link such as [[#Heading]], which
	// then has a Heading or a Block.
	Target  string
	Heading string // after '#', "" if none; nested headings stay joined: "A#B"
	Block   string // after '#^', "" if none
	Alias   string // after '|' for a wikilink, the link text for a markdown link
	Embed   bool   // ![[...]] or ![alt](note.md)
	Kind    string // KindWikilink or KindTopic
	// Context is the text around the link on its line, the link's own text
	// included: what the linking note says about the note it links to
	// (see linkContext).
	Context string
}

// located is a link with the byte range of its source text in the body. For
// a markdown link goldmark gives only the start, so end == start.
type located struct {
	start, end int
	link       Link
}

// clippingsBegin and clippingsEnd match the comments that open and close a
// clippings region; spaces inside the comment are optional.
var (
	clippingsBegin = regexp.MustCompile(`<!--\s*begin:clippings\s*-->`)
	clippingsEnd   = regexp.MustCompile(`<!--\s*end:clippings\s*-->`)
)

// links returns the note's links in document order: wikilinks and embeds
// found in the text outside code, then markdown links to local .md files
// taken from goldmark's tree, merged by position. In a topic note the links
// inside clippings regions are KindTopic.
func (m *markup) links(wikilinks []located, topicNote bool) []Link {
	all := slices.Clone(wikilinks)
	all = append(all, m.markdownLinks(wikilinks)...)
	slices.SortStableFunc(all, func(a, b located) int { return cmp.Compare(a.start, b.start) })
	var regions [][2]int
	if topicNote {
		regions = m.clippingRegions()
	}
	var out []Link
	r := 0
	for _, l := range all {
		for r < len(regions) && regions[r][1] <= l.start {
			r++
		}
		l.link.Kind = KindWikilink
		if r < len(regions) && l.start >= regions[r][0] {
			l.link.Kind = KindTopic
		}
		l.link.Context = m.linkContext(l.start, l.end)
		out = append(out, l.link)
	}
	return out
}

// linkContextBytes bounds the context taken on each side of a link: a list
// item or a table row is usually shorter, and a long paragraph says most
// about a link close to it.
const linkContextBytes = 160

// linkContext is the text of the line holding src[start:end], at most
// linkContextBytes on each side of it, cut back to whole words, with its
// whitespace folded. A cut never splits a UTF-8 sequence: it lands on a
// space.
func (m *markup) linkContext(start, end int) string {
	start = min(max(start, 0), len(m.src))
	end = min(max(end, start), len(m.src))
	from, to := m.lineStart(start), lineEnd(m.src, end)
	if start-from > linkContextBytes {
		from = start - linkContextBytes
		if i := bytes.IndexAny(m.src[from:start], " \t"); i >= 0 {
			from += i
		} else {
			from = start
		}
	}
	if to-end > linkContextBytes {
		to = end + linkContextBytes
		if i := bytes.LastIndexAny(m.src[end:to], " \t"); i >= 0 {
			to = end + i
		} else {
			to = end
		}
	}
	return strings.Join(strings.Fields(string(m.src[from:to])), " ")
}

// wikilinks are the note's wikilinks and embeds outside code that name
// something (see vault.Wikilinks). A table cell's escaped pipe ("[[a\|b]]")
// separates the alias.
func (m *markup) wikilinks() []located {
	var out []located
	for _, w := range vault.Wikilinks(m.src, m.code) {
		if l, ok := parseWikilink(w.Inner); ok {
			l.Embed = w.Embed
			out = append(out, located{start: w.Start, end: w.End, link: l})
		}
	}
	return out
}

// parseWikilink splits the inside of [[...]]. It reports false when the link
// names nothing: [[]], [[|alias]], [[#]].
func parseWikilink(inner string) (Link, bool) {
	var l Link
	target, alias, hasAlias := strings.Cut(inner, "|")
	if hasAlias {
		target = strings.TrimSuffix(target, `\`)
		l.Alias = strings.TrimSpace(alias)
	}
	target, sub, hasSub := strings.Cut(target, "#")
	l.Target = vault.NormalizeTarget(target)
	if hasSub {
		sub = strings.TrimSpace(sub)
		if block, ok := strings.CutPrefix(sub, "^"); ok {
			l.Block = strings.TrimSpace(block)
		} else {
			l.Heading = sub
		}
	}
	return l, l.Target != "" || l.Heading != "" || l.Block != ""
}

// markdownLinks returns the [text](dest) links and ![alt](dest) images whose
// destination is a local .md file: no URL scheme, percent-escapes decoded, a
// leading "./" dropped, the fragment taken as heading or ^block. Links that
// goldmark found inside a wikilink's brackets are skipped. Plain text has
// none.
func (m *markup) markdownLinks(wikilinks []located) []located {
	if m.root == nil {
		return nil
	}
	var out []located
	_ = ast.Walk(m.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var dest []byte
		embed := false
		switch n := n.(type) {
		case *ast.Link:
			dest = n.Destination
		case *ast.Image:
			dest, embed = n.Destination, true
		default:
			return ast.WalkContinue, nil
		}
		l, ok := localMarkdownLink(string(dest))
		if ok && !insideAny(n.Pos(), wikilinks) {
			l.Alias = plainText(m.src, n)
			l.Embed = embed
			out = append(out, located{start: n.Pos(), end: n.Pos(), link: l})
		}
		return ast.WalkContinue, nil
	})
	return out
}

// localMarkdownLink parses a markdown link destination that names a vault
// note, reporting false for URLs, anchors within the page and non-.md files.
func localMarkdownLink(dest string) (Link, bool) {
	p, frag, _ := strings.Cut(dest, "#")
	if i := strings.IndexAny(p, ":/"); i >= 0 && p[i] == ':' {
		return Link{}, false
	}
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	p = strings.TrimSpace(p)
	if len(p) < 3 || !strings.EqualFold(p[len(p)-3:], ".md") {
		return Link{}, false
	}
	l := Link{Target: vault.NormalizeTarget(strings.TrimPrefix(p, "./"))}
	if l.Target == "" {
		return Link{}, false
	}
	if block, ok := strings.CutPrefix(frag, "^"); ok {
		l.Block = block
	} else {
		l.Heading = frag
	}
	return l, true
}

// insideAny reports whether pos falls in one of spans, which are sorted and
// do not overlap.
func insideAny(pos int, spans []located) bool {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].end > pos })
	return i < len(spans) && spans[i].start <= pos
}

// clippingRegions returns the byte ranges between a begin:clippings marker
// and the next end:clippings marker, markers inside code ignored. A region
// left open runs to the end of the note; a begin inside a region is text.
func (m *markup) clippingRegions() [][2]int {
	var out [][2]int
	for at := 0; at < len(m.src); {
		b := m.nextMarker(clippingsBegin, at)
		if b == nil {
			break
		}
		e := m.nextMarker(clippingsEnd, b[1])
		if e == nil {
			out = append(out, [2]int{b[1], len(m.src)})
			break
		}
		out = append(out, [2]int{b[1], e[0]})
		at = e[1]
	}
	return out
}

// nextMarker is the first match of re at or after from that is not code.
func (m *markup) nextMarker(re *regexp.Regexp, from int) []int {
	for {
		loc := re.FindIndex(m.src[from:])
		if loc == nil {
			return nil
		}
		start, end := from+loc[0], from+loc[1]
		if !m.inCode(start, end) {
			return []int{start, end}
		}
		from = end
	}
}

// isTopicNote reports whether a vault path lies under TopicFolder.
func isTopicNote(path string) bool {
	return strings.HasPrefix(strings.ReplaceAll(path, `\`, "/"), TopicFolder)
}
