package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/tstest/fakellm"
)

// The adapter carries rag's request to the wire whole (every role, the
// content, max_tokens only when set) and the server's usage back.
func TestChatModelCarriesRequestAndUsage(t *testing.T) {
	t.Parallel()
	up := fakellm.New()
	t.Cleanup(up.Close)
	up.SetReply(func([]fakellm.Message) string { return "one two three" })
	c, err := llm.NewClient("ollama/fake", llm.Options{BaseURL: up.URL(), Getenv: func(string) string { return "" }, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := chatModel{c}
	msgs := []rag.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "a question of some words"},
		{Role: "assistant", Content: "an answer"}, {Role: "user", Content: "and another?"}}
	var text strings.Builder
	u, err := m.Stream(context.Background(), rag.ChatRequest{Messages: msgs, MaxTokens: 42}, func(s string) error {
		text.WriteString(s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "one two three" || u.CompletionTokens != 3 || u.PromptTokens == 0 {
		t.Errorf("stream: %q, usage %+v; want the reply and the server's usage (3 completion tokens, some prompt tokens)", text.String(), u)
	}
	reply, err := m.Chat(context.Background(), rag.ChatRequest{Messages: msgs[:2]})
	if err != nil || reply != "one two three" {
		t.Fatalf("chat: %q, %v", reply, err)
	}
	reqs := up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests upstream, want 2", len(reqs))
	}
	var want []fakellm.Message
	for _, msg := range msgs {
		want = append(want, fakellm.Message{Role: msg.Role, Content: msg.Content})
	}
	if diff := cmp.Diff(want, reqs[0].Messages); diff != "" || reqs[0].MaxTokens != 42 || !reqs[0].Stream {
		t.Errorf("stream upstream: max_tokens %d, stream %v, messages (-want +got):\n%s", reqs[0].MaxTokens, reqs[0].Stream, diff)
	}
	if diff := cmp.Diff(want[:2], reqs[1].Messages); diff != "" || reqs[1].MaxTokens != 0 || reqs[1].Stream {
		t.Errorf("chat upstream: max_tokens %d, stream %v, messages (-want +got):\n%s", reqs[1].MaxTokens, reqs[1].Stream, diff)
	}
}
