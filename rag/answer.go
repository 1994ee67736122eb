package rag

import (
	"context"
	"fmt"
	"strings"

	"github.com/vaultask/vaultask/internal/clip"
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
func answerMessages(q Question, query string, context []Hit, web []WebResult) []Message {
	msgs := []Message{{Role: "system", Content: systemPrompt}}
	for _, t := range recentTurns(q) {
		msgs = append(msgs, Message{Role: t.Role, Content: t.Text})
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
	msgs = append(msgs, Message{Role: "user", Content: strings.TrimRight(b.String(), "\n")})
	return msgs
}

// extractivePassages is how many passages, from distinct notes, an
// extractive answer shows; passageRunes bounds each.
const (
	extractivePassages = 3
	passageRunes       = 700
)

// ExtractiveHeading opens an answer made without a generation model.
const ExtractiveHeading = "**Retrieved passages** — no generation model is configured, so this is not a generated answer: the passages of the vault closest to the question, best first, each with its source."

// failedHeading opens an answer made of passages because the generation
// model failed; the note saying why follows it.
const failedHeading = "**Retrieved passages** — not a generated answer: the passages of the vault closest to the question, best first, each with its source."

// extractiveAnswer is the answer without a generation model: the best
// passages, each under its path-qualified citation, plainly labelled as
// retrieved passages by heading; the web results, if any, under their own
// heading.
func extractiveAnswer(hits []Hit, web []WebResult, heading string) (string, []Citation) {
	var b strings.Builder
	var cites []Citation
	if len(hits) == 0 {
		b.WriteString(SilentAnswer + "\n")
	} else {
		b.WriteString(heading + "\n\n")
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

// clipText cuts s to at most max runes at a word boundary, marking the cut
// (see clip.Text). A cut inside a Markdown table ends the passage at the
// last whole row, so the rows kept still render as a table, not as a line
// of pipes.
func clipText(s string, max int) string {
	if _, whole := clip.Prefix(s, max); whole {
		return s
	}
	cut, _ := clip.Prefix(s, max-1)
	if tableRow(cut[strings.LastIndexByte(cut, '\n')+1:]) {
		if kept := clipTable(cut); len(kept) > len(cut)/2 {
			return kept + "\n\n" + clip.Mark // a line right after a table is one of its rows
		}
	}
	return clip.Text(s, max, " \n")
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
	Usage     Usage      `json:"-"`
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
		err = p.extractive(r, a, emit, ExtractiveHeading, "no generation model")
	case a.Silent && len(a.Web) == 0:
		r.Trace.stage("answer", nil, "nothing found: the vault is silent")
		err = emit(SilentAnswer + "\n")
	default:
		err = p.generate(ctx, q, r, a, emit)
		if err != nil && text.Len() == 0 && ctx.Err() == nil {
			p.log.Warn("generation failed: answering with retrieved passages", keyErr, err)
			note := fmt.Sprintf("The generation model failed (%s), so these are retrieved passages.", failureReason(err))
			a.Notes = append(a.Notes, note)
			err = p.extractive(r, a, emit, failedHeading+"\n\n_"+note+"_", fmt.Sprintf("generation failed (%v)", err))
		}
	}
	for _, n := range a.Notes {
		if err == nil && !strings.Contains(text.String(), n) { // said under the heading already
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
		p.log.Warn("web search failed: answering from the vault only", keyErr, err)
		a.Notes = append(a.Notes, "Web search failed, so this answer uses the vault only.")
		r.Trace.stage("web", nil, fmt.Sprintf("search for %q failed (%v): vault only", r.Query, err))
		return
	}
	a.Web = results
	r.Trace.stage("web", nil, fmt.Sprintf("the vault is silent or thin: %d results for %q", len(results), r.Query))
}

func (p *Pipeline) extractive(r *Retrieval, a *Answer, emit func(string) error, heading, why string) error {
	var hits []Hit
	if !a.Silent {
		hits = r.Hits
	}
	text, cites := extractiveAnswer(hits, a.Web, heading)
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
	req := ChatRequest{Messages: answerMessages(q, r.Query, passages, a.Web), MaxTokens: q.MaxTokens}
	usage, err := p.opts.Generator.Stream(ctx, req, f.Write)
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
		p.log.Info("answer cited notes outside its context", keyCount, len(changes))
	}
	r.Trace.stage("citations", nil, fmt.Sprintf("%d wikilinks checked against the context", len(f.cites)), changes...)
	return err
}
