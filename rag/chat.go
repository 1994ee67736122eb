package rag

import "context"

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

// Usage is what a reply cost in tokens, as the model reports it (zero when
// it does not).
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}
