package rag

import (
	"context"
	"errors"
	"strings"
	"unicode"
)

// The generation model's verdicts on whether the passages answer the
// question (the retrieval evaluator of Corrective RAG, Yan et al. 2024,
// read by the answering model itself rather than a second call).
const (
	VerdictAnswered   = "answered"
	VerdictPartly     = "partly"
	VerdictNotInVault = "not in the vault"
)

// Verdict is the generation model's own judgement of the passages.
type Verdict struct {
	Verdict string `json:"verdict"`
	// Missing is the part of the question the passages do not answer, as
	// the model put it, for a partly answered one.
	Missing string `json:"missing,omitempty"`
}

// Outcome is the coverage a verdict says: answered is covered, partly is
// thin, not in the vault is silent.
func (v Verdict) Outcome() Outcome {
	switch v.Verdict {
	case VerdictAnswered:
		return OutcomeCovered
	case VerdictPartly:
		return OutcomeThin
	}
	return OutcomeSilent
}

// verdictRule is the part of the answering contract that asks for the
// verdict line.
const verdictRule = `Verdict
- Begin your reply with one line, before anything else: "VERDICT: answered" when the vault passages answer the whole question, "VERDICT: partly: <the part of the question they do not answer>" when they answer only part of it, or "VERDICT: not in the vault" when they do not answer it. Then a blank line, then the answer.
- Judge the vault passages only, never the web results.`

// maxVerdictBytes bounds how much of a reply is held back looking for the
// verdict line: a reply that starts otherwise is passed on as it is.
const maxVerdictBytes = 400

// errVerdictStop stops a stream once its verdict is read and the rest of
// the reply is not wanted (the web is searched and the answer made again,
// or the vault is silent).
var errVerdictStop = errors.New("verdict read: rest of the reply not wanted")

// verdictFilter takes the verdict line off the head of a streamed reply.
// It holds the reply back until its first line is complete: a verdict there
// is parsed and dropped (with the blank line after it), and decide says
// whether the rest is wanted (errVerdictStop when not); a first line that
// is no verdict, or a reply that has none within maxVerdictBytes, passes on
// whole, so a model that ignores the rule loses nothing.
type verdictFilter struct {
	next    func(string) error
	decide  func(v *Verdict) error
	held    strings.Builder
	done    bool
	verdict *Verdict
	// skipBlank drops the blank line that follows a verdict, which may
	// arrive in the next piece.
	skipBlank bool
}

// Write takes the next piece of the reply.
func (f *verdictFilter) Write(s string) error {
	if f.done {
		if f.skipBlank {
			s = strings.TrimLeft(s, " \t\r\n")
			if s == "" {
				return nil
			}
			f.skipBlank = false
		}
		return f.next(s)
	}
	f.held.WriteString(s)
	text := f.held.String()
	if trimmed := strings.TrimLeftFunc(text, unicode.IsSpace); trimmed != "" && !mayBeVerdict(trimmed) {
		return f.pass(text)
	}
	line, rest, complete := strings.Cut(strings.TrimLeftFunc(text, unicode.IsSpace), "\n")
	switch {
	case complete:
	case len(text) > maxVerdictBytes:
		return f.pass(text)
	default:
		return nil
	}
	v, ok := parseVerdict(line)
	if !ok {
		return f.pass(text)
	}
	f.done, f.verdict, f.skipBlank = true, v, true
	if err := f.decide(v); err != nil {
		return err
	}
	return f.Write(rest)
}

// Close passes on a reply that ended while held back.
func (f *verdictFilter) Close() error {
	if f.done {
		return nil
	}
	text := f.held.String()
	if v, ok := parseVerdict(strings.TrimSpace(text)); ok {
		f.done, f.verdict = true, v
		return f.decide(v)
	}
	return f.pass(text)
}

func (f *verdictFilter) pass(text string) error {
	f.done = true
	return f.next(text)
}

// mayBeVerdict reports whether text could still begin a verdict line: it
// starts with "verdict" (after Markdown emphasis or a heading mark), or
// with a beginning of that word.
func mayBeVerdict(text string) bool {
	t := strings.ToLower(strings.TrimLeft(text, "*_#> \t"))
	if t == "" {
		return true
	}
	const word = "verdict"
	if len(t) < len(word) {
		return strings.HasPrefix(word, t)
	}
	return strings.HasPrefix(t, word)
}

// verdictWords are how a verdict line may say each verdict, the longer
// of two that share a start first.
var verdictWords = []struct{ prefix, verdict string }{
	{"answered", VerdictAnswered}, {"partially", VerdictPartly}, {"partial", VerdictPartly}, {"partly", VerdictPartly},
	{"not in the vault", VerdictNotInVault}, {"not in vault", VerdictNotInVault}, {"not answered", VerdictNotInVault},
}

// parseVerdict reads a verdict line: "VERDICT: answered", "VERDICT:
// partly: what is missing", "VERDICT: not in the vault", in any case,
// with Markdown emphasis around any part.
func parseVerdict(line string) (*Verdict, bool) {
	t := strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(line, "*", ""), "_", " "))
	t = strings.TrimLeft(t, "#> \t")
	lower := strings.ToLower(t)
	if !strings.HasPrefix(lower, "verdict") {
		return nil, false
	}
	value := strings.TrimLeft(t[len("verdict"):], " \t:—–-")
	v := strings.ToLower(value)
	for _, k := range verdictWords {
		if !strings.HasPrefix(v, k.prefix) {
			continue
		}
		out := &Verdict{Verdict: k.verdict}
		if k.verdict == VerdictPartly {
			out.Missing = oneLine(strings.Trim(value[len(k.prefix):], " \t:—–-.\"'"), 200)
		}
		return out, true
	}
	return nil, false
}

// Judge retrieves q and has the generation model give its verdict on the
// passages, as Ask would before answering, without the answer: the reply
// is stopped once its verdict line is read. The verdict is nil without a
// generation model, for a question the judgement found the vault silent
// on (Ask does not ask the model then either), or when the model gave
// none.
func (p *Pipeline) Judge(ctx context.Context, q Question) (*Retrieval, *Verdict, error) {
	r, err := p.Retrieve(ctx, q)
	if err != nil || p.opts.Generator == nil || r.Coverage.Outcome == OutcomeSilent {
		return r, nil, err
	}
	var v *Verdict
	a := &Answer{Retrieval: r, Coverage: r.Coverage}
	err = p.stream(ctx, q, r, a, func(string) error { return errVerdictStop }, func(got *Verdict) error {
		v = got
		return errVerdictStop
	})
	if errors.Is(err, errVerdictStop) {
		err = nil
	}
	return r, v, err
}
