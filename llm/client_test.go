package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeAPI speaks the OpenAI-compatible wire format, as OpenRouter and
// Ollama's /v1 do. fail makes the first n requests answer status.
type fakeAPI struct {
	srv      *httptest.Server
	requests atomic.Int32
	auth     atomic.Value // last Authorization header
	// maxTokens is the last chat request's max_tokens, -1 when it had none.
	maxTokens atomic.Int64
	failN     int32
	status    int
}

func newFakeAPI(t *testing.T, failN int32, status int) *fakeAPI {
	f := &fakeAPI{failN: failN, status: status}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		if f.hit(w, r) {
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var data []item
		// Answer in reverse order: the client must place vectors by index.
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{"embedding", i, []float64{float64(len(req.Input[i])), float64(i), 1}})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if f.hit(w, r) {
			return
		}
		var req struct {
			Model         string `json:"model"`
			Stream        bool   `json:"stream"`
			StreamOptions *struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			MaxTokens *int64 `json:"max_tokens"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.maxTokens.Store(-1)
		if req.MaxTokens != nil {
			f.maxTokens.Store(*req.MaxTokens)
		}
		reply := fmt.Sprintf("%s heard %d messages, last %q", req.Model, len(req.Messages), req.Messages[len(req.Messages)-1].Content)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply}}}})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		words := strings.SplitAfter(reply, " ")
		for _, word := range words {
			chunk, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": word}}}})
			fmt.Fprintf(w, "data: %s\n\n", chunk)
			w.(http.Flusher).Flush()
		}
		if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
			chunk, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": req.Model, "choices": []any{},
				"usage": map[string]int{"prompt_tokens": 10 * len(req.Messages), "completion_tokens": len(words), "total_tokens": 10*len(req.Messages) + len(words)}})
			fmt.Fprintf(w, "data: %s\n\n", chunk)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) hit(w http.ResponseWriter, r *http.Request) bool {
	n := f.requests.Add(1)
	f.auth.Store(r.Header.Get("Authorization"))
	if n <= f.failN {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		fmt.Fprint(w, `{"error":{"message":"slow down"}}`)
		return true
	}
	return false
}

func (f *fakeAPI) url() string { return f.srv.URL + "/v1" }

func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

func TestEmbedOverOpenAICompatibleAPI(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "must-not-leak")
	f := newFakeAPI(t, 0, 0)
	c, err := NewClient("ollama/bge-m3", Options{BaseURL: f.url(), Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := c.Embed(context.Background(), []string{"a", "bbb", "cc"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{1, 3, 2} {
		if vs[i][0] != want || vs[i][1] != float32(i) {
			t.Errorf("vector %d = %v, want length marker %v at index %d", i, vs[i], want, i)
		}
	}
	if a := f.auth.Load().(string); strings.Contains(a, "must-not-leak") {
		t.Fatalf("OPENAI_API_KEY from the process environment reached ollama: %q", a)
	}
}

func TestProviderKeyRouting(t *testing.T) {
	f := newFakeAPI(t, 0, 0)
	getenv := env(EnvOpenRouterAPIKey, "or-key", EnvOpenAIAPIKey, "oa-key")
	for model, wantAuth := range map[string]string{
		"openrouter/google/gemini-2.5-flash": "Bearer or-key",
		"openai/gpt-4o-mini":                 "Bearer oa-key",
	} {
		c, err := NewClient(model, Options{BaseURL: f.url(), Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		reply, err := c.Chat(context.Background(), ChatRequest{Messages: []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		name := strings.SplitN(model, "/", 2)[1]
		if want := name + ` heard 2 messages, last "hi"`; reply != want {
			t.Errorf("%s reply = %q, want %q (the provider prefix must be stripped)", model, reply, want)
		}
		if got := f.auth.Load().(string); got != wantAuth {
			t.Errorf("%s Authorization = %q, want %q", model, got, wantAuth)
		}
	}
	if _, err := NewClient("openrouter/x", Options{Getenv: env()}); err == nil || !strings.Contains(err.Error(), EnvOpenRouterAPIKey) {
		t.Errorf("hosted model without a key: %v, want an error naming %s", err, EnvOpenRouterAPIKey)
	}
	if _, err := NewClient("builtin/use-lite", Options{}); err == nil {
		t.Error("NewClient accepted the built-in embedder, which has no HTTP API")
	}
}

func TestStreamDeliversDeltas(t *testing.T) {
	f := newFakeAPI(t, 0, 0)
	c, err := NewClient("ollama/llama3", Options{BaseURL: f.url(), Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	var deltas []string
	u, err := c.Stream(context.Background(), ChatRequest{Messages: []Message{{Role: "user", Content: "stream please"}}}, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 3 || strings.Join(deltas, "") != `llama3 heard 1 messages, last "stream please"` {
		t.Fatalf("deltas = %q", deltas)
	}
	if u != (Usage{PromptTokens: 10, CompletionTokens: len(deltas)}) {
		t.Fatalf("usage = %+v, want the server's final usage chunk", u)
	}
}

// TestMaxTokensReachesUpstream checks that a request's MaxTokens is sent as
// max_tokens, by Chat and by Stream, and that none is sent without one.
func TestMaxTokensReachesUpstream(t *testing.T) {
	f := newFakeAPI(t, 0, 0)
	c, err := NewClient("ollama/llama3", Options{BaseURL: f.url(), Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: "user", Content: "hi"}}
	stream := func(ctx context.Context, req ChatRequest) (string, error) {
		_, err := c.Stream(ctx, req, func(string) error { return nil })
		return "", err
	}
	for _, tc := range []struct {
		name string
		call func(context.Context, ChatRequest) (string, error)
		max  int
		want int64
	}{
		{"chat", c.Chat, 50, 50},
		{"stream", stream, 7, 7},
		{"chat without a bound", c.Chat, 0, -1},
		{"stream with a negative bound", stream, -5, -1},
	} {
		if _, err := tc.call(context.Background(), ChatRequest{Messages: msgs, MaxTokens: tc.max}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := f.maxTokens.Load(); got != tc.want {
			t.Errorf("%s with MaxTokens %d: upstream max_tokens %d, want %d (-1: none sent)", tc.name, tc.max, got, tc.want)
		}
	}
}

func TestRetriesOn429ThenSucceeds(t *testing.T) {
	f := newFakeAPI(t, 2, http.StatusTooManyRequests)
	c, err := NewClient("ollama/bge-m3", Options{BaseURL: f.url(), Getenv: env(), MaxRetries: 3, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("after two 429s: %v", err)
	}
	if n := f.requests.Load(); n != 3 {
		t.Fatalf("requests = %d, want 3 (two retries)", n)
	}
}

func TestErrorsNameModelAndEndpointNeverKey(t *testing.T) {
	f := newFakeAPI(t, 100, http.StatusInternalServerError)
	c, err := NewClient("openrouter/google/gemini-2.5-flash", Options{BaseURL: f.url(), Getenv: env(EnvOpenRouterAPIKey, "sk-secret-123"), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), ChatRequest{Messages: []Message{{Role: "user", Content: "hi"}}})
	if err == nil {
		t.Fatal("Chat succeeded against a failing server")
	}
	msg := err.Error()
	for _, want := range []string{"openrouter/google/gemini-2.5-flash", f.url(), "500"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "sk-secret-123") {
		t.Errorf("error leaks the key: %q", msg)
	}
	if n := f.requests.Load(); n != 2 {
		t.Errorf("requests = %d, want 2 (one retry)", n)
	}
}

func TestParseModelID(t *testing.T) {
	for in, want := range map[string]string{
		"openrouter/google/gemini-2.5-flash": "openrouter|google/gemini-2.5-flash",
		"ollama/bge-m3":                      "ollama|bge-m3",
		"builtin/use-lite":                   "builtin|use-lite",
	} {
		id, err := ParseModelID(in)
		if err != nil || id.Provider+"|"+id.Name != want || id.String() != in {
			t.Errorf("ParseModelID(%q) = %+v, %v", in, id, err)
		}
	}
	for _, bad := range []string{"", "gemini", "/x", "ollama/", "azure/gpt"} {
		if _, err := ParseModelID(bad); err == nil {
			t.Errorf("ParseModelID(%q) accepted", bad)
		}
	}
}

// Every suggested generation model is an id of a provider that generates.
func TestSuggestedGenerationModels(t *testing.T) {
	for _, id := range SuggestedGenerationModels {
		if m, err := ParseModelID(id); err != nil || m.Provider == "builtin" {
			t.Errorf("suggested %q: %+v, %v", id, m, err)
		}
	}
}

func TestEmbeddingMustRunLocally(t *testing.T) {
	for _, tc := range []struct {
		model, base string
		ok          bool
	}{
		{"builtin/use-lite", "", true},
		{"ollama/bge-m3", "", true},
		{"ollama/bge-m3", "http://nas.lan:11434/v1", true},
		{"openai/text-embedding-3-small", "http://my-box:8000/v1", true}, // the operator's own server
		{"openai/text-embedding-3-small", "", false},
		{"openrouter/some/embedder", "", false},
		{"builtin/use-lite", "http://x/v1", false},
	} {
		err := CheckLocalEmbedding(tc.model, tc.base)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrEmbeddingNotLocal) {
			t.Errorf("CheckLocalEmbedding(%q, %q) = %v, want ok=%v (or ErrEmbeddingNotLocal)", tc.model, tc.base, err, tc.ok)
		}
		if err != nil && !tc.ok && tc.base == "" && !strings.Contains(err.Error(), "personal") {
			t.Errorf("refusal %q does not say why", err)
		}
	}
	if _, err := NewEmbedder("openrouter/x/y", EmbedderOptions{}); err == nil {
		t.Error("NewEmbedder accepted a hosted embedding model")
	}
}

func TestEmbedderChecksDimension(t *testing.T) {
	f := newFakeAPI(t, 0, 0)
	e, err := NewEmbedder("ollama/bge-m3", EmbedderOptions{Options: Options{BaseURL: f.url(), Getenv: env()}, Dim: 1024})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.EmbedDocuments(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "1024") {
		t.Fatalf("3-d vectors with embedding_dim 1024: %v", err)
	}
}
