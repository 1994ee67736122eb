package rag

import (
	"context"
	"path"
	"strings"

	"github.com/vaultask/vaultask/vault"
)

// Citation is one wikilink of an answer, checked against the context.
type Citation struct {
	Link     string `json:"link"`           // as written between [[ and ]]
	Path     string `json:"path,omitempty"` // the note it resolves to
	Verified bool   `json:"verified"`
	Reason   string `json:"reason,omitempty"` // why it is not verified
}

// Reasons a citation is not verified.
const (
	ReasonNotInContext = "not in the context"
	ReasonNoSuchNote   = "no such note"
)

// unverifiedMark follows the shown text of a citation that failed the check.
const unverifiedMark = " (unverified citation)"

// maxLinkBytes bounds how much text the citation filter holds back waiting
// for a link to close; a wikilink is one short line.
const maxLinkBytes = 400

// citationFilter checks citations while the answer streams. Text passes
// through as it arrives; only a possible wikilink is held back until it
// closes (or turns out not to be one), so a reader never sees an unchecked
// link and the answer still streams: the delay is the few tokens of one
// link. A verified link passes unchanged; any other becomes its shown text
// followed by unverifiedMark, so no wikilink in an answer points outside
// its context. Code (a backtick span or fence) passes untouched: a
// [[link]] there is an example of syntax, not a citation.
type citationFilter struct {
	check func(link string) Citation
	emit  func(string) error
	held  string
	fence string // the backtick run that opened the code we are in, or ""
	cites []Citation
}

// Write takes the next piece of the answer.
func (f *citationFilter) Write(s string) error {
	f.held += s
	return f.drain(false)
}

// Close passes on what is still held: the answer has ended.
func (f *citationFilter) Close() error { return f.drain(true) }

func (f *citationFilter) drain(final bool) error {
	var out strings.Builder
	for f.held != "" {
		tick := strings.IndexByte(f.held, '`')
		if f.fence != "" || tick >= 0 && !strings.Contains(f.held[:tick], "[[") {
			if tick < 0 {
				out.WriteString(f.held)
				f.held = ""
				break
			}
			run := len(f.held[tick:]) - len(strings.TrimLeft(f.held[tick:], "`"))
			out.WriteString(f.held[:tick])
			if tick+run == len(f.held) && !final {
				f.held = f.held[tick:] // the run may go on in the next piece
				break
			}
			switch {
			case f.fence == "":
				f.fence = f.held[tick : tick+run]
			case run == len(f.fence):
				f.fence = ""
			}
			out.WriteString(f.held[tick : tick+run])
			f.held = f.held[tick+run:]
			continue
		}
		i := strings.Index(f.held, "[[")
		if i < 0 {
			keep := 0
			if !final {
				keep = len(f.held) - len(strings.TrimRight(f.held, "![")) // a link may be starting
			}
			out.WriteString(f.held[:len(f.held)-keep])
			f.held = f.held[len(f.held)-keep:]
			break
		}
		start := i
		if i > 0 && f.held[i-1] == '!' {
			start = i - 1 // an embed is checked like a link
		}
		out.WriteString(f.held[:start])
		rest := f.held[i+2:]
		end := strings.Index(rest, "]]")
		nl := strings.IndexByte(rest, '\n')
		switch {
		case end >= 0 && (nl < 0 || end < nl):
			out.WriteString(f.checked(rest[:end]))
			f.held = rest[end+2:]
		case nl >= 0 || len(rest) > maxLinkBytes || final:
			// Not a link: it never closes on its line.
			out.WriteString(f.held[start : i+2])
			f.held = rest
		default:
			f.held = f.held[start:]
			return f.send(out.String())
		}
	}
	return f.send(out.String())
}

func (f *citationFilter) send(s string) error {
	if s == "" {
		return nil
	}
	return f.emit(s)
}

// checked is what the answer shows for the link written as [[link]].
func (f *citationFilter) checked(link string) string {
	c := f.check(link)
	f.cites = append(f.cites, c)
	if c.Verified {
		return "[[" + link + "]]"
	}
	return shownText(link) + unverifiedMark
}

// shownText is what Obsidian shows for a link: the text after '|', else
// the target's last segment, with a heading after '›' (a block id is not
// shown).
func shownText(link string) string {
	if _, shown, ok := strings.Cut(link, "|"); ok && strings.TrimSpace(shown) != "" {
		return strings.TrimSpace(shown)
	}
	target, heading, _ := strings.Cut(strings.TrimSuffix(link, `\`), "#")
	var parts []string
	if target = strings.TrimSpace(target); target != "" {
		parts = append(parts, path.Base(target))
	}
	if heading = strings.TrimSpace(heading); heading != "" && !strings.HasPrefix(heading, "^") {
		parts = append(parts, heading)
	}
	if len(parts) == 0 {
		return "link"
	}
	return strings.Join(parts, " › ")
}

// contextMatch finds the context note a link names by path or file name,
// as Obsidian would among these notes, without reading the index.
func contextMatch(link string, context []Hit) (vault.Chunk, bool) {
	key := vault.LinkKey(link)
	if key == "" {
		return vault.Chunk{}, false
	}
	for _, h := range context {
		p := strings.ToLower(strings.TrimSuffix(h.Chunk.Path, path.Ext(h.Chunk.Path)))
		if p == key || strings.HasSuffix(p, "/"+key) {
			return h.Chunk, true
		}
	}
	return vault.Chunk{}, false
}

// checkCitation verifies a link written in an answer: it must name a note
// among the passages the model was given. A note the request may not see
// resolves to nothing, like one that does not exist.
func (p *Pipeline) checkCitation(ctx context.Context, link string, passages []Hit, scope vault.Scope) Citation {
	c := Citation{Link: link}
	if h, ok := contextMatch(link, passages); ok {
		c.Path, c.Verified = h.Path, true
		return c
	}
	docs, err := p.opts.Searcher.ResolveLinks(ctx, []string{link}, scope)
	if err != nil {
		c.Reason = "could not be checked"
		return c
	}
	d, ok := docs[link]
	if !ok {
		c.Reason = ReasonNoSuchNote
		return c
	}
	c.Path = d.Path
	for _, h := range passages {
		if h.Chunk.DocID == d.DocID {
			c.Verified = true
			return c
		}
	}
	c.Reason = ReasonNotInContext
	return c
}
