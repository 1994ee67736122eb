package fakeanthropic

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Request is what a client sent to POST /v1/messages.
type Request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Tools    []Tool    `json:"tools"`
	Messages []Message `json:"messages"`
}

// Tool is a tool the client offers the model.
type Tool struct {
	Name string `json:"name"`
}

// Message is one message of a request; Content is its blocks (a plain
// string is read as one text block).
type Message struct {
	Role    string
	Content []Block
}

// Block is a content block: text, tool_use or tool_result.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	// Content of a tool_result: a string or blocks, kept as sent.
	Content json.RawMessage `json:"content,omitempty"`
}

// UnmarshalJSON reads content given as a string or as blocks.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	var text string
	if json.Unmarshal(raw.Content, &text) == nil {
		m.Content = []Block{{Type: "text", Text: text}}
		return nil
	}
	return json.Unmarshal(raw.Content, &m.Content)
}

// ResultText is the text of a tool_result block: its string content, or
// its text blocks joined.
func (b Block) ResultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var blocks []Block
	_ = json.Unmarshal(b.Content, &blocks)
	for _, c := range blocks {
		s += c.Text
	}
	return s
}

// ToolResults are the tool_result blocks of a request's last message.
func (r Request) ToolResults() []Block {
	if len(r.Messages) == 0 {
		return nil
	}
	var out []Block
	for _, b := range r.Messages[len(r.Messages)-1].Content {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

// HasTool reports whether the request offers the model a tool of that name.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Reply is one turn of the model: a tool call when ToolName is set, else
// Text.
type Reply struct {
	Text      string
	ToolName  string
	ToolInput map[string]any
}

// Server is the fake API. Turn answers each request; default: a fixed
// text.
type Server struct {
	srv *httptest.Server
	// Turn decides the model's turn; it may block (a test doing something
	// between two turns) and is called one request at a time.
	Turn func(Request) Reply

	turnMu   sync.Mutex // one Turn at a time
	mu       sync.Mutex
	requests []Request
}

// New starts a server; Close stops it.
func New() *Server {
	s := &Server{Turn: func(Request) Reply { return Reply{Text: "The fake model answers."} }}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]int{"input_tokens": 100})
	})
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the API's base URL, for ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests are the message requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req Request
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": err.Error()}})
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	s.turnMu.Lock()
	reply := s.Turn(req)
	s.turnMu.Unlock()
	blocks, stop := reply.blocks()
	msg := map[string]any{"id": "msg_" + randomID(), "type": "message", "role": "assistant", "model": req.Model,
		"stop_sequence": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 20}}
	if !req.Stream {
		msg["content"], msg["stop_reason"] = blocks, stop
		writeJSON(w, msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	msg["content"], msg["stop_reason"] = []any{}, nil
	event(w, "message_start", map[string]any{"type": "message_start", "message": msg})
	for i, b := range blocks {
		streamBlock(w, i, b)
	}
	event(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 20}})
	event(w, "message_stop", map[string]any{"type": "message_stop"})
}

// blocks are the reply's content blocks and its stop reason.
func (r Reply) blocks() ([]map[string]any, string) {
	if r.ToolName == "" {
		return []map[string]any{{"type": "text", "text": r.Text}}, "end_turn"
	}
	input := r.ToolInput
	if input == nil {
		input = map[string]any{}
	}
	return []map[string]any{{"type": "tool_use", "id": "toolu_" + randomID(), "name": r.ToolName, "input": input}}, "tool_use"
}

// streamBlock sends a block as the API streams it: its start with an
// empty body, the body as deltas, its stop.
func streamBlock(w http.ResponseWriter, i int, b map[string]any) {
	start := map[string]any{}
	for k, v := range b {
		start[k] = v
	}
	var delta map[string]any
	if b["type"] == "tool_use" {
		input, _ := json.Marshal(b["input"])
		start["input"] = map[string]any{}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
	} else {
		start["text"] = ""
		delta = map[string]any{"type": "text_delta", "text": b["text"]}
	}
	event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
	event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
	event(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

func event(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
