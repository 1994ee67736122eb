package rag

import (
	"context"
	"errors"
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

` + verdictRule + `

Style
- Answer in the language of the question, briefly, in Markdown.`

// noVerdictPrompt is the answering contract without its verdict rule
// (Options.NoVerdict).
var noVerdictPrompt = strings.Replace(systemPrompt, verdictRule+"\n\n", "", 1)

// answerMessages is the conversation the generation model answers: the
// contract (with its verdict rule when verdict is set), the recent turns
// the request may show, and the question with its context and any web
// results.
func answerMessages(q Question, query string, context []Hit, web []WebResult, verdict bool) []Message {
	contract := systemPrompt
	if !verdict {
		contract = noVerdictPrompt
	}
	msgs := []Message{{Role: "system", Content: contract}}
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
		b.WriteString(renderContext(context))
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
// retrieved passages by heading (nothing when there are none); the web
// results, if any, under their own heading.
func extractiveAnswer(hits []Hit, web []WebResult, heading, nothing string) (string, []Citation) {
	var b strings.Builder
	var cites []Citation
	if len(hits) == 0 {
		b.WriteString(nothing + "\n")
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
	// Coverage is how well the vault covers the question: the retrieval's
	// judgement, or the generation model's verdict where it gave one.
	Coverage Coverage `json:"coverage"`
	// Verdict is the generation model's own verdict on the passages; nil
	// for an extractive answer or a model that gave none.
	Verdict *Verdict `json:"verdict,omitempty"`
	// Usage is what the generation model reported the answer cost; zero
	// for an extractive answer.
	Usage     Usage      `json:"-"`
	Retrieval *Retrieval `json:"-"`
}

// ThinNote follows an extractive answer whose passages likely do not
// answer the question.
const ThinNote = "The vault says little on this: these are the nearest passages it has, and they may not answer it."

// indexingAnswer is what an answer says instead of "silent" while the index
// has not read the whole vault yet: done of total notes so far (0 of 0
// when not known).
func indexingAnswer(done, total int) string {
	if total > 0 {
		return fmt.Sprintf("The vault is still being indexed (%d of %d notes so far), so it cannot say yet whether it holds this. Ask again once indexing is done.", done, total)
	}
	return "The vault is still being indexed, so it cannot say yet whether it holds this. Ask again once indexing is done."
}

// Ask answers q, passing the answer to onDelta piece by piece as it is
// generated. Without a generation model, or when the model fails before
// its first word, the answer is extractive. The coverage judgement
// (Retrieval.Coverage) decides what the answer may say: covered, thin
// (passages, with the web beside them when q.AllowWeb and a web searcher
// allow it), silent (SilentAnswer, and the web when allowed), or still
// indexing. A generation model reads the passages and gives its own verdict
// first (verdictRule; not asked with Options.NoVerdict, when the judgement
// alone decides): "not in the vault" or "partly" with the web allowed
// and not yet searched searches it and answers again, vault and web apart;
// "not in the vault" without it is silent. A failed web search leaves a
// vault-only answer with a note.
func (p *Pipeline) Ask(ctx context.Context, q Question, onDelta func(string) error) (*Answer, error) {
	r, err := p.Retrieve(ctx, q)
	if err != nil {
		return nil, err
	}
	a := &Answer{Retrieval: r, Silent: r.Silent, Coverage: r.Coverage}
	var text strings.Builder
	emit := func(s string) error {
		text.WriteString(s)
		return onDelta(s)
	}
	web := p.webAllowed(q, r)
	if web && r.Thin {
		p.searchWeb(ctx, r, a, r.Query, "the vault is "+string(r.Coverage.Outcome))
	} else if web {
		r.Trace.stage("web", nil, "not searched first: the vault covers this (the generation model's verdict may still ask for it)")
	}

	switch {
	case p.opts.Generator == nil:
		err = p.extractive(r, a, emit, ExtractiveHeading, "no generation model")
	case r.Coverage.Outcome == OutcomeSilent && len(a.Web) == 0:
		r.Trace.stage("answer", nil, "nothing found: the vault is silent")
		err = emit(SilentAnswer + "\n")
	case r.Coverage.Outcome == OutcomeIndexing && len(r.Hits) == 0 && len(a.Web) == 0:
		r.Trace.stage("answer", nil, "nothing found while the index reads the vault")
		err = emit(indexingAnswer(r.Coverage.Done, r.Coverage.Total) + "\n")
	default:
		err = p.generate(ctx, q, r, a, emit, web)
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

// webAllowed says whether this request may search the web, and says why
// not in the trace.
func (p *Pipeline) webAllowed(q Question, r *Retrieval) bool {
	switch {
	case p.opts.Web == nil:
		r.Trace.stage("web", nil, "off: web search is not enabled")
		return false
	case !q.AllowWeb:
		r.Trace.stage("web", nil, "off for this request: allow_web is false")
		return false
	}
	return true
}

// searchWeb runs the web stage for a request that allows it, searching
// query (the question, its standalone rewrite, or the part of it the
// vault does not answer) because of why.
func (p *Pipeline) searchWeb(ctx context.Context, r *Retrieval, a *Answer, query, why string) {
	results, err := p.opts.Web.Search(ctx, query, p.opts.Settings.WebResults)
	if err != nil {
		p.log.Warn("web search failed: answering from the vault only", keyErr, err)
		a.Notes = append(a.Notes, "Web search failed, so this answer uses the vault only.")
		r.Trace.stage("web", nil, fmt.Sprintf("search for %q failed (%v): vault only", query, err))
		return
	}
	a.Web = results
	r.Trace.stage("web", nil, fmt.Sprintf("%s: %d results for %q", why, len(results), query))
}

func (p *Pipeline) extractive(r *Retrieval, a *Answer, emit func(string) error, heading, why string) error {
	hits, nothing := r.Hits, SilentAnswer
	switch r.Coverage.Outcome {
	case OutcomeSilent:
		hits = nil
	case OutcomeIndexing:
		nothing = indexingAnswer(r.Coverage.Done, r.Coverage.Total)
		if len(hits) > 0 {
			a.Notes = append(a.Notes, nothing)
		}
	case OutcomeThin:
		a.Notes = append(a.Notes, ThinNote)
	}
	text, cites := extractiveAnswer(hits, a.Web, heading, nothing)
	a.Extractive, a.Citations = true, cites
	r.Trace.stage("answer", nil, why+": extractive answer")
	return emit(text)
}

// generate streams the model's answer through the verdict and citation
// filters. When the model's verdict asks for the web and web may be
// searched but was not, the reply is stopped after its verdict, the web
// searched, and the answer made again with the results; a verdict of "not
// in the vault" without web results is the silent answer.
func (p *Pipeline) generate(ctx context.Context, q Question, r *Retrieval, a *Answer, emit func(string) error, web bool) error {
	if p.opts.NoVerdict {
		r.Trace.stage("verdict", nil, fmt.Sprintf("not asked (models.generation_verdict is false): the judgement decides, %s (%.2f)", r.Coverage.Outcome, r.Coverage.Score))
		return p.stream(ctx, q, r, a, emit, func(*Verdict) error { return nil })
	}
	again := false
	err := p.stream(ctx, q, r, a, emit, func(v *Verdict) error {
		a.Verdict = v
		a.Coverage.Outcome, a.Coverage.Grey = v.Outcome(), false
		if r.Coverage.Outcome == OutcomeIndexing && v.Verdict != VerdictAnswered {
			a.Coverage.Outcome = OutcomeIndexing
		}
		a.Silent = a.Coverage.Outcome == OutcomeSilent
		r.Trace.stage("verdict", nil, fmt.Sprintf("the generation model: %s%s (the judgement was %s, %.2f)", v.Verdict, missingNote(v), r.Coverage.Outcome, r.Coverage.Score))
		switch {
		case v.Verdict != VerdictAnswered && web && len(a.Web) == 0:
			query := r.Query
			if v.Verdict == VerdictPartly && v.Missing != "" {
				query = v.Missing
			}
			p.searchWeb(ctx, r, a, query, "the generation model's verdict: "+v.Verdict)
			again = len(a.Web) > 0
			if again {
				return errVerdictStop
			}
		case a.Coverage.Outcome == OutcomeSilent && len(a.Web) == 0:
			return errVerdictStop
		case a.Coverage.Outcome == OutcomeIndexing && v.Verdict == VerdictNotInVault && len(a.Web) == 0:
			return errVerdictStop
		}
		return nil
	})
	switch {
	case !errors.Is(err, errVerdictStop):
		return err
	case again:
		r.Trace.stage("answer", nil, "answered again with the web results beside the vault passages")
		return p.stream(ctx, q, r, a, emit, func(*Verdict) error { return nil })
	case a.Coverage.Outcome == OutcomeIndexing:
		return emit(indexingAnswer(r.Coverage.Done, r.Coverage.Total) + "\n")
	}
	a.Citations = nil
	return emit(SilentAnswer + "\n")
}

func missingNote(v *Verdict) string {
	if v.Missing == "" {
		return ""
	}
	return fmt.Sprintf(" (missing: %s)", v.Missing)
}

// stream runs one generation: the model's reply, its verdict line handed
// to decide and taken off, its citations checked.
func (p *Pipeline) stream(ctx context.Context, q Question, r *Retrieval, a *Answer, emit func(string) error, decide func(*Verdict) error) error {
	passages := r.Context
	if r.Coverage.Outcome == OutcomeSilent {
		passages = nil // nothing relevant: the model is told the vault has nothing
	}
	cf := &citationFilter{emit: emit, check: func(link string) Citation { return p.checkCitation(ctx, link, passages, r.Scope) }}
	vf := &verdictFilter{next: cf.Write, decide: decide}
	req := ChatRequest{Messages: answerMessages(q, r.Query, passages, a.Web, !p.opts.NoVerdict), MaxTokens: q.MaxTokens}
	usage, err := p.opts.Generator.Stream(ctx, req, vf.Write)
	a.Usage.add(usage)
	if err == nil {
		err = vf.Close()
	}
	if err == nil {
		err = cf.Close()
	}
	a.Citations = cf.cites
	var changes []string
	for _, c := range cf.cites {
		if !c.Verified {
			changes = append(changes, fmt.Sprintf("unverified [[%s]]: %s", c.Link, c.Reason))
		}
	}
	if len(changes) > 0 {
		p.log.Info("answer cited notes outside its context", keyCount, len(changes))
	}
	r.Trace.stage("citations", nil, fmt.Sprintf("%d wikilinks checked against the context", len(cf.cites)), changes...)
	return err
}
