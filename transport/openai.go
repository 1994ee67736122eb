package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/transport/allowweb"
	"github.com/vaultask/vaultask/vault"
)

// ModelID is the one model the OpenAI-compatible API serves.
const ModelID = "vault-ask"

// modelCreated is the created time /v1/models shows for ModelID: fixed, so
// the listing is the same on every call.
var modelCreated = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	var bad *requestError
	if _, _, err := v1Query(r.URL.RawQuery); errors.As(err, &bad) {
		writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: bad.param, Message: bad.msg})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   []map[string]any{{"id": ModelID, "object": "model", "created": modelCreated, "owned_by": "vaultask"}},
	})
}

// chatRequest is the part of an OpenAI chat completion request vaultask
// reads. The fields that change what a reply must be (n, tool_choice,
// response_format, max_tokens, functions, function_call, logprobs,
// modalities, audio) are honoured or refused (see checkOptions);
// the others (temperature, user, …) only tune sampling and are ignored.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N                   *int            `json:"n"`
	Tools               json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	// Read only to refuse what they ask for (see refuseOutputs).
	Functions    json.RawMessage `json:"functions"`
	FunctionCall json.RawMessage `json:"function_call"`
	Logprobs     *bool           `json:"logprobs"`
	TopLogprobs  *int            `json:"top_logprobs"`
	Modalities   []string        `json:"modalities"`
	Audio        json.RawMessage `json:"audio"`
	// vaultask's own field allow_web (the answer may fall back to the web
	// and then sees open notes only; default false, as the model a client
	// configures holds the transcript, personal notes included) is read by
	// allowweb.ReadJSON, which sees the spellings and repeats encoding/json
	// would take. It may come in the URL's query instead (v1Query).
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// requestError is a request that cannot be answered as sent: a 400 naming
// the parameter.
type requestError struct {
	param, msg string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(param, format string, args ...any) error {
	return &requestError{param: param, msg: fmt.Sprintf(format, args...)}
}

// v1Query reads a /v1 request's URL query, where allow_web may come as a
// client's or a proxy's setting (the openai SDKs' default_query puts it
// there on every request), read by allow_web's strict rule. Any other
// parameter is refused, naming it: read by nobody, a setting that the
// caller believes narrows what it sees would silently not.
func v1Query(rawQuery string) (allow, given bool, err error) {
	allow, given, err = allowweb.ReadQuery(rawQuery, func(name string) error {
		return badRequest(name, "the query parameter %q is not one vaultask reads: a /v1 URL's query takes allow_web (true or false) only, the rest of a request goes in its body", name)
	})
	var ae *allowweb.Error
	if errors.As(err, &ae) {
		return false, false, badRequest(allowweb.Name, "%v", err)
	}
	return allow, given, err
}

// decodeChat parses a chat completion request, its body and its URL's
// query, into the question it asks: the last message, from the user, is
// the question; the user and assistant messages before it are the
// conversation (system and tool messages are the client's own business and
// are not shown to the pipeline, whose answering contract they must not
// override). allow_web may be given in the query, the body or both, and
// then the same in both.
func decodeChat(body []byte, rawQuery string) (chatRequest, rag.Question, error) {
	var req chatRequest
	queryAllow, inQuery, err := v1Query(rawQuery)
	if err != nil {
		return req, rag.Question{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return req, rag.Question{}, badRequest("", "request body is not a valid chat completion request: %v", err)
	}
	if dec.More() {
		return req, rag.Question{}, badRequest("", "request body holds more than one JSON value")
	}
	if req.Model == "" {
		return req, rag.Question{}, badRequest("model", "model is required: the model served is %q", ModelID)
	}
	if len(req.Messages) == 0 {
		return req, rag.Question{}, badRequest("messages", "messages is required: the conversation, ending with the user's question")
	}
	maxTokens, err := checkOptions(req)
	if err != nil {
		return req, rag.Question{}, err
	}
	var turns []rag.Turn
	for i, m := range req.Messages {
		text, err := messageText(m.Content)
		if err != nil {
			return req, rag.Question{}, badRequest(fmt.Sprintf("messages[%d].content", i), "messages[%d].content: %v", i, err)
		}
		switch m.Role {
		case "user", "assistant":
			turns = append(turns, rag.Turn{Role: m.Role, Text: text})
		case "system", "developer", "tool", "function":
		default:
			return req, rag.Question{}, badRequest(fmt.Sprintf("messages[%d].role", i), "messages[%d].role %q: want user, assistant, system, developer or tool", i, m.Role)
		}
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "user" || len(turns) == 0 {
		return req, rag.Question{}, badRequest("messages", "the last message must be the user's question, not a %s message", last.Role)
	}
	q := rag.Question{Text: strings.TrimSpace(turns[len(turns)-1].Text), History: turns[:len(turns)-1]}
	if q.Text == "" {
		return req, rag.Question{}, badRequest("messages", "the question (the last user message) is empty")
	}
	bodyAllow, inBody, err := allowweb.ReadJSON(body)
	if err != nil {
		return req, rag.Question{}, badRequest(allowweb.Name, "%v", err)
	}
	if inQuery && inBody && queryAllow != bodyAllow {
		return req, rag.Question{}, badRequest(allowweb.Name, "allow_web is %t in the URL's query and %t in the body: give it in one of them, or the same in both", queryAllow, bodyAllow)
	}
	q.AllowWeb = queryAllow || bodyAllow
	q.MaxTokens = maxTokens
	return req, q, nil
}

// checkOptions refuses what vaultask cannot honour, naming the field, rather
// than answer as if it had: more than one choice, a tool call the client
// requires, a structured output format. tools with tool_choice "auto" or
// "none" (what Open WebUI and other clients send along by default) is
// honest to ignore: the model may always answer without a tool, and
// vaultask's does. A valid max_tokens or max_completion_tokens (the
// smaller, when both) is the answer's bound upstream.
func checkOptions(req chatRequest) (maxTokens int, err error) {
	if err := refuseOutputs(req); err != nil {
		return 0, err
	}
	if req.N != nil && *req.N != 1 {
		return 0, badRequest("n", "n is %d: vaultask gives one answer per request (n 1, or leave it out)", *req.N)
	}
	if given(req.ToolChoice) {
		var choice string
		if json.Unmarshal(req.ToolChoice, &choice) != nil || choice != "auto" && choice != "none" {
			return 0, badRequest("tool_choice", "tool_choice %s requires a tool call, which vaultask never makes: send \"auto\" or \"none\", or leave it out", req.ToolChoice)
		}
	}
	if given(req.ResponseFormat) {
		var f struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(req.ResponseFormat, &f) != nil || f.Type != "text" {
			return 0, badRequest("response_format", "response_format %s: vaultask answers in Markdown text only ({\"type\":\"text\"}, or leave it out)", req.ResponseFormat)
		}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		switch {
		case f.v == nil:
		case *f.v < 1:
			return 0, badRequest(f.name, "%s is %d: it must be at least 1", f.name, *f.v)
		case maxTokens == 0 || *f.v < maxTokens:
			maxTokens = *f.v
		}
	}
	return maxTokens, nil
}

// given reports whether an optional JSON field was sent with a value.
func given(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// messageText reads a message's content: a string, an array of parts of
// which the text parts are read (Open WebUI sends those; an image part is
// ignored), or null.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or an array of content parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// completionMeta is vaultask's own part of a completion: what the answer
// cites and used, for clients that show it (the /chat page). Other clients
// ignore the extra key.
type completionMeta struct {
	Scope      string `json:"scope"` // "all" (personal notes included) or "open"
	Extractive bool   `json:"extractive"`
	// Coverage is how well the vault covers the question: covered, thin,
	// silent, or still indexing; Silent says the same for older readers.
	Coverage  rag.Coverage    `json:"coverage"`
	Verdict   *rag.Verdict    `json:"verdict,omitempty"`
	Silent    bool            `json:"silent"`
	Citations []rag.Citation  `json:"citations"`
	Web       []rag.WebResult `json:"web,omitempty"`
	Notes     []string        `json:"notes,omitempty"`
}

func metaOf(a *rag.Answer, q rag.Question) completionMeta {
	m := completionMeta{Scope: vault.ScopeFor(q.AllowWeb).String(), Citations: []rag.Citation{}}
	if a != nil {
		m.Extractive, m.Coverage, m.Verdict, m.Silent, m.Web, m.Notes = a.Extractive, a.Coverage, a.Verdict, a.Silent, a.Web, a.Notes
		if a.Citations != nil {
			m.Citations = a.Citations
		}
	}
	return m
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOf(a *rag.Answer) usage {
	if a == nil {
		return usage{}
	}
	return usage{PromptTokens: a.Usage.PromptTokens, CompletionTokens: a.Usage.CompletionTokens, TotalTokens: a.Usage.PromptTokens + a.Usage.CompletionTokens}
}

func completionID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "chatcmpl-" + hex.EncodeToString(b)
}

// retryAfter is what a busy server tells a client to wait, in seconds.
const retryAfter = "2"

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	req, q, err := decodeChat(body, r.URL.RawQuery)
	var bad *requestError
	if errors.As(err, &bad) {
		writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: bad.param, Message: bad.msg})
		return
	}
	if req.Model != ModelID {
		writeError(w, http.StatusNotFound, apiError{Type: invalidRequest, Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("the model %q does not exist: this server serves one model, %q", req.Model, ModelID)})
		return
	}
	if err := s.opts.Answerer.Admit(q); err != nil {
		s.refuseTooLong(w, err)
		return
	}
	release, ok := s.answerSlot(w, r)
	if !ok {
		return
	}
	defer release()
	id, created := completionID(), time.Now().Unix()
	if req.Stream {
		s.streamCompletion(w, r, q, id, created, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	var text strings.Builder
	a, err := s.opts.Answerer.Ask(r.Context(), q, func(d string) error {
		text.WriteString(d)
		return nil
	})
	if err != nil {
		s.answerFailed(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": created, "model": ModelID,
		"choices": []map[string]any{{"index": 0, "message": map[string]string{"role": "assistant", "content": text.String()}, "finish_reason": "stop"}},
		"usage":   usageOf(a), "vaultask": metaOf(a, q),
	})
}

// refuseTooLong answers a question over the pipeline's limits 400, with
// the code OpenAI gives a conversation longer than its model's context.
func (s *Server) refuseTooLong(w http.ResponseWriter, err error) {
	var le *rag.LimitError
	if !errors.As(err, &le) {
		s.log.Error("admitting a question failed", keyErr, err)
		writeError(w, http.StatusInternalServerError, apiError{Type: serverFault, Message: "the answer failed; the server's log says why"})
		return
	}
	writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: "messages", Code: "context_length_exceeded", Message: limitMessage(le)})
}

// limitMessage says which limit a question is over and how to get under it.
func limitMessage(le *rag.LimitError) string {
	return fmt.Sprintf("%v (api.max_%s_bytes): shorten it, or ask the operator to raise the limit", le, le.Limit)
}

// answerFailed answers an error from the pipeline before any output: 499-ish
// silence when the client went away, else 500 with a generic message (the
// log has the cause; clients never see internal text).
func (s *Server) answerFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(context.Cause(r.Context()), ErrShutdown) {
		writeError(w, http.StatusServiceUnavailable, apiError{Type: serverFault, Code: "shutting_down", Message: shuttingDown})
		return
	}
	if r.Context().Err() != nil {
		return
	}
	s.log.Error("answer failed", keyErr, err)
	writeError(w, http.StatusInternalServerError, apiError{Type: serverFault, Message: "the answer failed; the server's log says why"})
}

// streamCompletion answers as OpenAI's stream does: data-only SSE frames,
// the role first, then the text as the model produces it, a final chunk with
// finish_reason "stop", the usage when asked for, then [DONE]. Comments keep
// the stream alive while no text flows. Every frame is flushed at once, and
// generation stops when the client goes.
func (s *Server) streamCompletion(w http.ResponseWriter, r *http.Request, q rag.Question, id string, created int64, withUsage bool) {
	sse := startSSE(w)
	var mu sync.Mutex // the keepalive goroutine and the deltas share sse
	send := func(choices []map[string]any, extra map[string]any) error {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": ModelID, "choices": choices}
		for k, v := range extra {
			chunk[k] = v
		}
		b, err := json.Marshal(chunk)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		sse.data(string(b))
		return sse.flush()
	}
	delta := func(d map[string]string, finish any) []map[string]any {
		return []map[string]any{{"index": 0, "delta": d, "finish_reason": finish}}
	}
	if err := send(delta(map[string]string{"role": "assistant", "content": ""}, nil), nil); err != nil {
		return
	}
	stopKeepalive := keepAlive(sse, &mu, s.opts.KeepAlive)
	defer stopKeepalive()
	a, err := s.opts.Answerer.Ask(r.Context(), q, func(d string) error {
		stopKeepalive()
		return send(delta(map[string]string{"content": d}, nil), nil)
	})
	stopKeepalive()
	if err != nil {
		s.streamFailed(sse, r, err)
		return
	}
	if err := send(delta(map[string]string{}, "stop"), map[string]any{"vaultask": metaOf(a, q)}); err != nil {
		return
	}
	if withUsage {
		if err := send([]map[string]any{}, map[string]any{"usage": usageOf(a)}); err != nil {
			return
		}
	}
	mu.Lock()
	sse.data("[DONE]")
	_ = sse.flush()
	mu.Unlock()
}

// keepAlive writes a comment to sse every interval, under mu, until the
// stop it returns is called. stop returns once the writing goroutine has
// ended, so no comment is written after text flows or the handler returns;
// calling it again does nothing.
func keepAlive(sse *sseWriter, mu *sync.Mutex, every time.Duration) (stop func()) {
	flowing, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-flowing:
				return
			case <-t.C:
				mu.Lock()
				sse.comment("vaultask is working on the answer")
				_ = sse.flush()
				mu.Unlock()
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(flowing); <-stopped }) }
}

// streamFailed ends a stream whose answer failed with an error frame in the
// API's error shape, then [DONE], so that a client reading to the end sees
// why it ended rather than a cut connection. A client that went away gets
// nothing.
func (s *Server) streamFailed(sse *sseWriter, r *http.Request, err error) {
	code, msg := "", "the answer failed; the server's log says why"
	switch {
	case errors.Is(context.Cause(r.Context()), ErrShutdown):
		code, msg = "shutting_down", shuttingDown
	case r.Context().Err() != nil:
		return
	default:
		s.log.Error("answer failed while streaming", keyErr, err)
	}
	b, _ := json.Marshal(apiError{Type: serverFault, Code: code, Message: msg}.body())
	sse.data(string(b))
	sse.data("[DONE]")
	_ = sse.flush()
}

// shuttingDown is what a request cancelled by the server's shutdown is told.
const shuttingDown = "the server is shutting down: retry once it is back"

// ErrShutdown is the cause with which the process cancels the requests
// still running when it stops (http.Server.BaseContext), after the running
// answers had their time to finish: their streams are told why.
var ErrShutdown = errors.New("server shutting down")
