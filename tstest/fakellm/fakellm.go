package fakellm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Kept is how many of the latest requests and stream ends a Server keeps
// for Requests and Finished: a benchmark sends thousands, each with its
// whole prompt.
const Kept = 1000

// Server is a fake OpenAI-compatible API. Reply decides the answer to each
// request from its messages; the answer streams word by word, the first
// word after FirstToken and each next after PerToken.
//
// Set the exported fields before the first request; while requests may be
// in flight, change them with SetReply and SetDelays.
type Server struct {
	srv *httptest.Server
	// Reply answers a conversation; default: a fixed sentence.
	Reply func(msgs []Message) string
	// FirstToken and PerToken are the delays before the first word and
	// between words of a streamed reply.
	FirstToken, PerToken time.Duration
	// Refuse, when set and true for a request, answers it 400 Bad Request,
	// which clients do not retry: a model that fails before its first word.
	Refuse func(msgs []Message) bool
	// RerankScore scores one document for POST /v1/rerank; default
	// Overlap.
	RerankScore func(query, doc string) float64
	// RerankRaw, when set, is the whole body of every rerank reply, sent
	// with status 200: a server that answers garbage.
	RerankRaw string
	// RerankDelay holds each rerank reply back, or until the client gives
	// up: a model too slow for its budget.
	RerankDelay time.Duration

	mu       sync.Mutex // guards the fields above, once serving, and below
	requests []Request
	finished []time.Time // when each streamed reply's last word was sent
	reranks  []RerankRequest
}

// RerankRequest is what a client sent to POST /v1/rerank.
type RerankRequest struct {
	Model     string
	Query     string
	Documents []string
	TopN      int
	// Bytes is the size of the request body on the wire.
	Bytes int
}

// Message is one message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is what a client sent.
type Request struct {
	Model    string
	Stream   bool
	Messages []Message
	// MaxTokens is the request's max_tokens, 0 when it had none.
	MaxTokens int
}

// New starts a server; Close stops it.
func New() *Server {
	s := &Server{Reply: func([]Message) string { return "The vault answers this." }}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/rerank", s.rerank)
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the API root, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// SetReply sets Reply, safely while requests are in flight.
func (s *Server) SetReply(reply func(msgs []Message) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Reply = reply
}

// SetDelays sets FirstToken and PerToken, safely while requests are in
// flight; a reply already streaming keeps the delays it started with.
func (s *Server) SetDelays(first, per time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.FirstToken, s.PerToken = first, per
}

// keep appends v to xs, dropping the oldest beyond Kept.
func keep[T any](xs []T, v T) []T {
	if len(xs) >= Kept {
		xs = append(xs[:0], xs[len(xs)-Kept+1:]...)
	}
	return append(xs, v)
}

// Requests are the requests received so far, the latest Kept of them.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Finished are the times streamed replies ended, in order, the latest Kept
// of them.
func (s *Server) Finished() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.finished...)
}

// RerankRequests are the rerank requests received so far, the latest Kept
// of them.
func (s *Server) RerankRequests() []RerankRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RerankRequest(nil), s.reranks...)
}

// Overlap is the default rerank score: the share of the query's distinct
// words (lower case, letters and digits) that occur in doc. A lexical
// stand-in for a cross-encoder, so a rerank path can be measured for its
// plumbing and cost, not for a model's judgement.
func Overlap(query, doc string) float64 {
	q := words(query)
	if len(q) == 0 {
		return 0
	}
	d := words(doc)
	n := 0
	for w := range q {
		if d[w] {
			n++
		}
	}
	return float64(n) / float64(len(q))
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w] = true
	}
	return out
}

func (s *Server) rerank(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req struct {
		Model     string   `json:"model"`
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
		TopN      int      `json:"top_n"`
	}
	if err != nil || json.Unmarshal(body, &req) != nil || req.Query == "" || len(req.Documents) == 0 {
		http.Error(w, `{"error":{"message":"bad rerank request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reranks = keep(s.reranks, RerankRequest{Model: req.Model, Query: req.Query, Documents: req.Documents, TopN: req.TopN, Bytes: len(body)})
	score, raw, delay := s.RerankScore, s.RerankRaw, s.RerankDelay
	s.mu.Unlock()
	if score == nil {
		score = Overlap
	}
	select {
	case <-r.Context().Done():
		return
	case <-time.After(delay):
	}
	w.Header().Set("Content-Type", "application/json")
	if raw != "" {
		fmt.Fprint(w, raw)
		return
	}
	type result struct {
		Index int     `json:"index"`
		Score float64 `json:"relevance_score"`
	}
	results := make([]result, len(req.Documents))
	for i, d := range req.Documents {
		results[i] = result{Index: i, Score: score(req.Query, d)}
	}
	// llama-server sends the results best first, not in document order.
	slices.SortStableFunc(results, func(a, b result) int { return cmp.Compare(b.Score, a.Score) })
	if req.TopN > 0 && req.TopN < len(results) {
		results = results[:req.TopN]
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "object": "list", "results": results,
		"usage": map[string]int{"prompt_tokens": len(body) / 4, "total_tokens": len(body) / 4}})
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages  []Message `json:"messages"`
		MaxTokens int       `json:"max_tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = keep(s.requests, Request{Model: req.Model, Stream: req.Stream, Messages: req.Messages, MaxTokens: req.MaxTokens})
	replyFn, refuse, first, per := s.Reply, s.Refuse, s.FirstToken, s.PerToken
	s.mu.Unlock()
	if refuse != nil && refuse(req.Messages) {
		http.Error(w, `{"error":{"message":"refused by the test"}}`, http.StatusBadRequest)
		return
	}
	reply := replyFn(req.Messages)
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(m.Content) / 4
	}
	words := strings.SplitAfter(reply, " ")
	usage := map[string]int{"prompt_tokens": prompt, "completion_tokens": len(words), "total_tokens": prompt + len(words)}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "fake-1", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply}}},
			"usage":   usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	for i, word := range words {
		wait := per
		if i == 0 {
			wait = first
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(wait):
		}
		if !send(map[string]any{"id": "fake-1", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": word}}}}) {
			return
		}
	}
	s.mu.Lock()
	s.finished = keep(s.finished, time.Now())
	s.mu.Unlock()
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(map[string]any{"id": "fake-1", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model, "choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}
