package main

import (
	"context"

	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/rag"
)

var _ rag.ChatModel = chatModel{}

// chatModel is an llm client as rag's ChatModel: rag declares its own
// messages, request and usage so that it links no provider's client, and
// llm imports no sibling, so the two meet here.
type chatModel struct{ c *llm.Client }

func (m chatModel) Chat(ctx context.Context, req rag.ChatRequest) (string, error) {
	reply, err := m.c.Chat(ctx, llmRequest(req))
	return reply, modelError(err)
}

func (m chatModel) Stream(ctx context.Context, req rag.ChatRequest, onDelta func(string) error) (rag.Usage, error) {
	u, err := m.c.Stream(ctx, llmRequest(req), onDelta)
	return rag.Usage(u), modelError(err)
}

// modelError gives err the reason llm reads in it, for an answer that has
// to do without the model.
func modelError(err error) error {
	if err == nil {
		return nil
	}
	return &rag.ModelError{Reason: llm.FailureReason(err), Err: err}
}

func llmRequest(req rag.ChatRequest) llm.ChatRequest {
	msgs := make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = llm.Message(m)
	}
	return llm.ChatRequest{Messages: msgs, MaxTokens: req.MaxTokens}
}
