package transport

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/tstest/smallvault"
)

func chatBody(content string, extra map[string]any) map[string]any {
	body := map[string]any{"model": ModelID, "messages": []any{map[string]string{"role": "user", "content": content}}}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// A question over a limit is a 400 naming the limit and the size, streamed
// or not, and never reaches the model.
func TestChatOverLimits(t *testing.T) {
	up := upstream(t)
	hs, _ := testServer(t, smallvault.Open(t), up, Options{})
	long := strings.Repeat("knead ", rag.DefaultQuestionBytes/6+1)
	history := []any{
		map[string]string{"role": "user", "content": "how do I knead?"},
		map[string]string{"role": "assistant", "content": strings.Repeat("x", rag.DefaultTranscriptBytes)},
		map[string]string{"role": "user", "content": "and how long?"},
	}
	for _, tc := range []struct {
		name, want string
		body       map[string]any
	}{
		{"question", fmt.Sprintf("is %d bytes, over the limit of %d bytes (api.max_question_bytes)", len(strings.TrimSpace(long)), rag.DefaultQuestionBytes), chatBody(long, nil)},
		{"question streamed", "(api.max_question_bytes)", chatBody(long, map[string]any{"stream": true})},
		{"transcript", fmt.Sprintf("over the limit of %d bytes (api.max_transcript_bytes)", rag.DefaultTranscriptBytes), map[string]any{"model": ModelID, "messages": history}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(t, http.MethodPost, hs.URL+"/v1/chat/completions", tc.body)
			var e apiErr
			decode(t, resp, &e)
			if resp.StatusCode != http.StatusBadRequest || deref(e.Error.Code) != "context_length_exceeded" || deref(e.Error.Param) != "messages" || !strings.Contains(e.Error.Message, tc.want) {
				t.Fatalf("status %d, error %+v; want 400 context_length_exceeded saying %q", resp.StatusCode, e.Error, tc.want)
			}
		})
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("%d over-limit requests reached the model", n)
	}
}

// What vaultask cannot honour is a 400 naming the field; what it can is
// accepted, and a valid max_tokens bounds the answer upstream.
func TestChatOptions(t *testing.T) {
	up := upstream(t)
	hs, _ := testServer(t, smallvault.Open(t), up, Options{})
	const question = "How long do I knead sourdough dough?"
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup", "parameters": map[string]any{"type": "object"}}}}
	for _, tc := range []struct {
		name  string
		extra map[string]any
		param string // "" when accepted
	}{
		{"n 3", map[string]any{"n": 3}, "n"},
		{"n 0", map[string]any{"n": 0}, "n"},
		{"tool_choice required", map[string]any{"tools": tools, "tool_choice": "required"}, "tool_choice"},
		{"tool_choice a function", map[string]any{"tools": tools, "tool_choice": map[string]any{"type": "function", "function": map[string]string{"name": "lookup"}}}, "tool_choice"},
		{"response_format json_object", map[string]any{"response_format": map[string]string{"type": "json_object"}}, "response_format"},
		{"response_format json_schema", map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "x"}}}, "response_format"},
		{"max_tokens -5", map[string]any{"max_tokens": -5}, "max_tokens"},
		{"max_completion_tokens 0", map[string]any{"max_completion_tokens": 0}, "max_completion_tokens"},
		{"legacy functions", map[string]any{"functions": []any{map[string]any{"name": "lookup", "parameters": map[string]any{"type": "object"}}}}, "functions"},
		{"legacy function_call a function", map[string]any{"function_call": map[string]string{"name": "lookup"}}, "function_call"},
		{"logprobs", map[string]any{"logprobs": true}, "logprobs"},
		{"top_logprobs", map[string]any{"top_logprobs": 3}, "top_logprobs"},
		{"modalities with audio", map[string]any{"modalities": []string{"text", "audio"}}, "modalities"},
		{"audio", map[string]any{"audio": map[string]string{"voice": "alloy", "format": "wav"}}, "audio"},
		{"n 1", map[string]any{"n": 1}, ""},
		{"function_call auto", map[string]any{"functions": []any{}, "function_call": "auto"}, ""},
		{"function_call none", map[string]any{"function_call": "none"}, ""},
		{"no logprobs", map[string]any{"logprobs": false, "top_logprobs": 0}, ""},
		{"modalities text", map[string]any{"modalities": []string{"text"}}, ""},
		{"tools with tool_choice auto", map[string]any{"tools": tools, "tool_choice": "auto"}, ""},
		{"tools alone", map[string]any{"tools": tools}, ""},
		{"response_format text", map[string]any{"response_format": map[string]string{"type": "text"}}, ""},
		{"nulls", map[string]any{"n": nil, "tool_choice": nil, "response_format": nil, "max_tokens": nil, "functions": nil, "function_call": nil,
			"logprobs": nil, "top_logprobs": nil, "modalities": nil, "audio": nil}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(t, http.MethodPost, hs.URL+"/v1/chat/completions", chatBody(question, tc.extra))
			if tc.param == "" {
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d, want 200", resp.StatusCode)
				}
				return
			}
			var e apiErr
			decode(t, resp, &e)
			if resp.StatusCode != http.StatusBadRequest || deref(e.Error.Param) != tc.param || !strings.Contains(e.Error.Message, tc.param) {
				t.Fatalf("status %d, error %+v; want 400 naming %s", resp.StatusCode, e.Error, tc.param)
			}
		})
	}
	for _, tc := range []struct {
		extra map[string]any
		want  int
	}{
		{map[string]any{"max_tokens": 50}, 50},
		{map[string]any{"max_completion_tokens": 70, "stream": true}, 70},
		{map[string]any{"max_tokens": 90, "max_completion_tokens": 80}, 80},
		{nil, 0},
	} {
		before := len(up.Requests())
		resp := do(t, http.MethodPost, hs.URL+"/v1/chat/completions", chatBody(question, tc.extra))
		readSSE(t, resp.Body, nil)
		reqs := up.Requests()
		if resp.StatusCode != http.StatusOK || len(reqs) != before+1 || reqs[len(reqs)-1].MaxTokens != tc.want {
			t.Errorf("%v: status %d, upstream max_tokens %v, want %d", tc.extra, resp.StatusCode, reqs[before:], tc.want)
		}
	}
}

// MCP tool calls take the answers' slots: with the one slot held by an
// answer, a search is a tool error saying the server is busy, and once the
// answer is done the search runs.
func TestMCPToolsTakeSlots(t *testing.T) {
	up := upstream(t)
	up.FirstToken = 2 * time.Second
	hs, _ := testServer(t, smallvault.Open(t), up, Options{MaxConcurrent: 1})
	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	search := map[string]any{"name": "vault_search", "arguments": map[string]any{"query": "knead dough"}}
	answer := do(t, http.MethodPost, hs.URL+"/v1/chat/completions", chatBody("How long do I knead sourdough dough?", map[string]any{"stream": true}))
	readSSE(t, answer.Body, func(sseEvent) bool { return true }) // the answer holds the slot
	if got := mcpCall(t, hs.URL, session, "tools/call", search); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "api.max_concurrent") {
		t.Errorf("a search while the one slot is taken: %s", got)
	}
	readSSE(t, answer.Body, nil)
	answer.Body.Close()
	if got := mcpCall(t, hs.URL, session, "tools/call", search); strings.Contains(got, `"isError":true`) {
		t.Errorf("a search once the slot is free: %s", got)
	}
}
