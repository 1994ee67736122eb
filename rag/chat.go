package rag

import (
	"context"
	"errors"
	"strings"

	"github.com/vaultask/vaultask/internal/clip"
)

// ChatModel is a generation model: it answers, rewrites multi-turn
// questions and, behind NewChatReranker, scores passages. cmd/vaultask
// adapts llm's client to it, so that rag names no provider and links no
// provider's client.
type ChatModel interface {
	// Chat returns the model's whole reply.
	Chat(ctx context.Context, req ChatRequest) (string, error)
	// Stream passes the reply to onDelta piece by piece as the model sends
	// it and returns what the model reports it cost. An error from onDelta
	// stops the stream and is returned.
	Stream(ctx context.Context, req ChatRequest, onDelta func(string) error) (Usage, error)
}

// ChatRequest is one conversation for a generation model to continue.
type ChatRequest struct {
	Messages []Message
	// MaxTokens bounds the reply's tokens (a client's max_tokens); 0 leaves
	// the model's own bound.
	MaxTokens int
}

// Message is one message of a conversation.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// ModelError is a ChatModel's failure with, in Reason, why it failed in
// words the reader of an answer may see: the status the model answered, or
// that it could not be reached, was too slow or was cut off, never an
// endpoint, a model name or a key. Adapters wrap their client's errors in
// one; an answer that has to do without the model says the reason.
type ModelError struct {
	Reason string
	Err    error
}

func (e *ModelError) Error() string { return e.Err.Error() }
func (e *ModelError) Unwrap() error { return e.Err }

// failureReason is why err says a model failed, or a plain "its reply could
// not be used" when it does not say.
func failureReason(err error) string {
	var me *ModelError
	if errors.As(err, &me) && me.Reason != "" {
		return me.Reason
	}
	return "its reply could not be used"
}

// Usage is what a reply cost in tokens, as the model reports it (zero when
// it does not).
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// add adds what another generation of the same answer cost.
func (u *Usage) add(v Usage) {
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
}

// oneLine folds whitespace and cuts s hard to max runes (see clip.Text).
func oneLine(s string, max int) string {
	return clip.Text(strings.Join(strings.Fields(s), " "), max, "")
}
