package rag

import (
	"context"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/vault"
)

// SilentAnswer is what an answer says when the vault has nothing relevant.
const SilentAnswer = "The vault is silent on this."

// systemPrompt is the answering contract. It is code: the golden file
// testdata/system_prompt.golden holds it, and a change to either shows in review.
const systemPrompt = `You answer questions from the user's Obsidian vault. The vault is the authority.

Sources
- Vault passages come in <passage> elements. Each has a cite attribute holding the wikilink of its note, such as [[en/Plugins/File recovery|File recovery]].
- Web results, when there are any, come numbered, each with a URL. They are offered only because the vault is silent or thin on the question.
- Use nothing else: no outside knowledge, no guesses.

Citing
- Every factual claim from the vault ends with the wikilink of the passage it comes from, copied exactly from that passage's cite attribute.
- Never write a wikilink that is not a cite attribute of a passage, and never cite a web result as a wikilink.

Web results
- Put every claim from the web after the vault's part, under the heading "` + WebHeading + `", each claim followed by its URL in angle brackets, such as <https://example.com/page>.
- Where the vault and the web disagree, say that they disagree and what each says; do not decide which is right.

When the vault has nothing
- If no passage answers the question, say exactly "` + SilentAnswer + `" and then, only if there are web results, answer from them under the web heading.

Style
- Answer in the language of the question, briefly, in Markdown.`

// answerMessages is the conversation the generation model answers: the
// contract, the recent turns the request may show, and the question with
// its context and any web results.
func answerMessages(q Question, query string, context []Hit, web []WebResult) []llm.Message {
	msgs := []llm.Message{{Role: "system", Content: systemPrompt}}
	for _, t := range recentTurns(q) {
		msgs = append(msgs, llm.Message{Role: t.Role, Content: t.Text})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n", strings.TrimSpace(q.Text))
	if query != strings.TrimSpace(q.Text) {
		fmt.Fprintf(&b, "Standalone question: %s\n", query)
	}
	b.WriteString("\nVault passages:\n\n")
	if len(context) == 0 {
		b.WriteString("(none)\n")
	} else {
		b.WriteString(RenderContext(context))
	}
	if len(web) > 0 {
		b.WriteString("\nWeb results:\n\n")
		b.WriteString(renderWeb(web))
	}
	msgs = append(msgs, llm.Message{Role: "user", Content: strings.TrimRight(b.String(), "\n")})
	return msgs
}

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

// extractivePassages is how many passages, from distinct notes, an
// extractive answer shows; passageRunes bounds each.
const (
	extractivePassages = 3
	passageRunes       = 700
)

// ExtractiveHeading opens an answer made without a generation model.
const ExtractiveHeading = "**Retrieved passages** — no generation model is configured, so this is not a generated answer: the passages of the vault closest to the question, best first, each with its source."

// extractiveAnswer is the answer without a generation model: the best
// passages, each under its path-qualified citation, plainly labelled as
// retrieved passages; the web results, if any, under their own heading.
func extractiveAnswer(hits []Hit, web []WebResult) (string, []Citation) {
	var b strings.Builder
	var cites []Citation
	if len(hits) == 0 {
		b.WriteString(SilentAnswer + "\n")
	} else {
		b.WriteString(ExtractiveHeading + "\n\n")
		seen := map[string]bool{}
		for _, h := range hits {
			if seen[h.Chunk.DocID] {
				continue
			}
			seen[h.Chunk.DocID] = true
			link := Link(h.Chunk.Path, h.Chunk.Title)
			fmt.Fprintf(&b, "%d. %s", len(seen), link)
			if h.Chunk.HeadingPath != "" {
				fmt.Fprintf(&b, " › %s", h.Chunk.HeadingPath)
			}
			b.WriteString("\n")
			for line := range strings.SplitSeq(clipText(passageText(h.Chunk), passageRunes), "\n") {
				fmt.Fprintf(&b, "   > %s\n", line)
			}
			b.WriteString("\n")
			cites = append(cites, Citation{Link: strings.TrimSuffix(strings.TrimPrefix(link, "[["), "]]"), Path: h.Chunk.Path, Verified: true})
			if len(seen) == extractivePassages {
				break
			}
		}
	}
	if len(web) > 0 {
		b.WriteString("\n" + webSection(web))
	}
	return strings.TrimRight(b.String(), "\n") + "\n", cites
}

// passageText is a chunk's text as an extractive answer quotes it: without
// the heading line its label already shows, links as their shown text.
func passageText(c vault.Chunk) string {
	body := strings.TrimSpace(c.Body)
	if first, rest, _ := strings.Cut(body, "\n"); strings.HasPrefix(first, "#") && c.HeadingPath != "" &&
		strings.HasSuffix(c.HeadingPath, strings.TrimSpace(strings.TrimLeft(first, "#"))) {
		body = strings.TrimSpace(rest)
	}
	return plainLinks(body)
}

// clipText cuts s to at most max runes at a word boundary, marking the cut.
// A cut inside a Markdown table ends the passage at the last whole row, so
// the rows kept still render as a table, not as a line of pipes.
func clipText(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	cut := string([]rune(s)[:max-1])
	if tableRow(cut[strings.LastIndexByte(cut, '\n')+1:]) {
		if kept := clipTable(cut); len(kept) > len(cut)/2 {
			return kept + "\n\n…" // a line right after a table is one of its rows
		}
	}
	if i := strings.LastIndexAny(cut, " \n"); i > len(cut)/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// tableRow reports whether a line of Markdown is a pipe table's row.
func tableRow(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), "|")
}

// clipTable ends text, cut inside a table row, before that row; a table
// left without a body row (a header, its delimiter) goes too.
func clipTable(text string) string {
	lines := strings.Split(text, "\n")
	lines = lines[:len(lines)-1]
	rows := 0
	for rows < len(lines) && tableRow(lines[len(lines)-1-rows]) {
		rows++
	}
	if rows < 3 {
		lines = lines[:len(lines)-rows]
	}
	return strings.TrimRight(strings.Join(lines, "\n"), " \n")
}

// Answer is what Ask produced.
type Answer struct {
	Text       string      `json:"text"`       // the whole answer, as streamed
	Extractive bool        `json:"extractive"` // retrieved passages, not generated
	Silent     bool        `json:"silent"`     // the vault had nothing
	Citations  []Citation  `json:"citations"`
	Web        []WebResult `json:"web,omitempty"`
	Notes      []string    `json:"notes,omitempty"` // degradations the reader should know of
	// Usage is what the generation model reported the answer cost; zero
	// for an extractive answer.
	Usage     llm.Usage  `json:"-"`
	Retrieval *Retrieval `json:"-"`
}

// Ask answers q, passing the answer to onDelta piece by piece as it is
// generated. Without a generation model, or when the model fails before
// its first word, the answer is extractive. Web results are sought only
// when the pipeline has a web searcher, q.AllowWeb is set and the vault is
// silent or thin; a failed web search leaves a vault-only answer with a note.
func (p *Pipeline) Ask(ctx context.Context, q Question, onDelta func(string) error) (*Answer, error) {
	r, err := p.Retrieve(ctx, q)
	if err != nil {
		return nil, err
	}
	a := &Answer{Retrieval: r, Silent: r.Silent}
	var text strings.Builder
	emit := func(s string) error {
		text.WriteString(s)
		return onDelta(s)
	}
	if q.AllowWeb && p.opts.Web != nil {
		p.searchWeb(ctx, r, a)
	} else if p.opts.Web == nil {
		r.Trace.stage("web", nil, "off: web search is not enabled")
	} else {
		r.Trace.stage("web", nil, "off for this request: allow_web is false")
	}

	switch {
	case p.opts.Generator == nil:
		err = p.extractive(r, a, emit, "no generation model")
	case a.Silent && len(a.Web) == 0:
		r.Trace.stage("answer", nil, "nothing found: the vault is silent")
		err = emit(SilentAnswer + "\n")
	default:
		err = p.generate(ctx, q, r, a, emit)
		if err != nil && text.Len() == 0 && ctx.Err() == nil {
			p.log.Warn("generation failed: answering with retrieved passages", "err", err)
			a.Notes = append(a.Notes, "The generation model failed, so these are retrieved passages.")
			err = p.extractive(r, a, emit, fmt.Sprintf("generation failed (%v)", err))
		}
	}
	for _, n := range a.Notes {
		if err == nil {
			err = emit("\n_" + n + "_\n")
		}
	}
	a.Text = text.String()
	return a, err
}

// searchWeb runs the web stage for a request that allows it.
func (p *Pipeline) searchWeb(ctx context.Context, r *Retrieval, a *Answer) {
	if !a.Silent && !r.Thin {
		r.Trace.stage("web", nil, "not needed: the vault covers this")
		return
	}
	results, err := p.opts.Web.Search(ctx, r.Query, p.opts.Settings.WebResults)
	if err != nil {
		p.log.Warn("web search failed: answering from the vault only", "err", err)
		a.Notes = append(a.Notes, "Web search failed, so this answer uses the vault only.")
		r.Trace.stage("web", nil, fmt.Sprintf("search for %q failed (%v): vault only", r.Query, err))
		return
	}
	a.Web = results
	r.Trace.stage("web", nil, fmt.Sprintf("the vault is silent or thin: %d results for %q", len(results), r.Query))
}

func (p *Pipeline) extractive(r *Retrieval, a *Answer, emit func(string) error, why string) error {
	var hits []Hit
	if !a.Silent {
		hits = r.Hits
	}
	text, cites := extractiveAnswer(hits, a.Web)
	a.Extractive, a.Citations = true, cites
	r.Trace.stage("answer", nil, why+": extractive answer")
	return emit(text)
}

// generate streams the model's answer through the citation filter.
func (p *Pipeline) generate(ctx context.Context, q Question, r *Retrieval, a *Answer, emit func(string) error) error {
	passages := r.Context
	if a.Silent {
		passages = nil // nothing relevant: the model is told the vault has nothing
	}
	f := &citationFilter{emit: emit, check: func(link string) Citation { return p.checkCitation(ctx, link, passages, r.Scope) }}
	usage, err := p.opts.Generator.Stream(llm.WithMaxTokens(ctx, q.MaxTokens), answerMessages(q, r.Query, passages, a.Web), f.Write)
	a.Usage = usage
	if err == nil {
		err = f.Close()
	}
	a.Citations = f.cites
	var changes []string
	for _, c := range f.cites {
		if !c.Verified {
			changes = append(changes, fmt.Sprintf("unverified [[%s]]: %s", c.Link, c.Reason))
		}
	}
	if len(changes) > 0 {
		p.log.Info("answer cited notes outside its context", "count", len(changes))
	}
	r.Trace.stage("citations", nil, fmt.Sprintf("%d wikilinks checked against the context", len(f.cites)), changes...)
	return err
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
