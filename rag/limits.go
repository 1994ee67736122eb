package rag

import (
	"fmt"
	"strings"
)

// Limits bound what one question may cost. A zero field means its default,
// never no limit.
type Limits struct {
	// QuestionBytes bounds the text that is searched: the question, and
	// the earlier turns a rewrite without a model joins to it.
	QuestionBytes int
	// TranscriptBytes bounds the conversation the generation model is
	// sent: the question and the recent turns shown with it.
	TranscriptBytes int
}

// The default limits. 16 KiB is a question with a pasted page or error log
// (about 2,500 words) and 128 query-embedding windows at most; beyond it a
// "question" is a document. 128 KiB of transcript is about 32k tokens, what
// the context of a common local model holds beside the passages.
const (
	DefaultQuestionBytes   = 16 << 10
	DefaultTranscriptBytes = 128 << 10
)

func (l Limits) withDefaults() Limits {
	if l.QuestionBytes <= 0 {
		l.QuestionBytes = DefaultQuestionBytes
	}
	if l.TranscriptBytes <= 0 {
		l.TranscriptBytes = DefaultTranscriptBytes
	}
	return l
}

// LimitError is a question over one of the Limits.
type LimitError struct {
	// Limit is "question" (Limits.QuestionBytes) or "transcript"
	// (Limits.TranscriptBytes).
	Limit     string
	Size, Max int
}

func (e *LimitError) Error() string {
	what := "the question"
	if e.Limit == "transcript" {
		what = "the question with the recent turns sent to the model"
	}
	return fmt.Sprintf("%s is %d bytes, over the limit of %d bytes", what, e.Size, e.Max)
}

// Admit reports, as a *LimitError, whether q is over the pipeline's limits.
// Retrieve and Ask check it first; a server checks it before it answers.
func (p *Pipeline) Admit(q Question) error {
	l := p.opts.Limits
	size := len(strings.TrimSpace(q.Text))
	if size > l.QuestionBytes {
		return &LimitError{Limit: "question", Size: size, Max: l.QuestionBytes}
	}
	for _, t := range recentTurns(q) {
		size += len(t.Text)
	}
	if size > l.TranscriptBytes {
		return &LimitError{Limit: "transcript", Size: size, Max: l.TranscriptBytes}
	}
	return nil
}
