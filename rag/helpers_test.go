package rag

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/vault"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run go test -update if the change is intended)\n--- want\n%s\n--- got\n%s", p, want, got)
	}
}

// testDim is the dimension of bagEmbedder's vectors.
const testDim = 64

var testSpace = vault.EmbeddingSpace{Model: "test/bag-of-words", Dim: testDim}

// bagEmbedder is a deterministic embedder: each word adds to one of testDim
// dimensions, so texts sharing words are near. down makes it fail like an
// unreachable embedding host.
type bagEmbedder struct{ down atomic.Bool }

func (e *bagEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	if e.down.Load() {
		return nil, errors.New("dial tcp 127.0.0.1:11434: connection refused")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = bagVector(t)
	}
	return out, nil
}

// EmbedQueries embeds questions as it embeds passages.
func (e *bagEmbedder) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	return e.EmbedDocuments(ctx, texts)
}

// EmbedQuery embeds a question in testSpace.
func (e *bagEmbedder) EmbedQuery(ctx context.Context, space vault.EmbeddingSpace, text string) (vault.QueryVector, error) {
	return SpaceEmbedder{Texts: e, Space: testSpace}.EmbedQuery(ctx, space, text)
}

func bagVector(text string) []float32 {
	v := make([]float32, testDim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%testDim]++
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0], norm = 1, 1
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

func note(path, text string) vault.NoteInput {
	return vault.NoteInput{Path: path, Rev: "1-a", Text: text, MTime: time.Unix(1700000000, 0)}
}

// mustIndex builds a real index in a temp dir, with notes under personal
// globs personal, every chunk embedded by bagEmbedder.
func mustIndex(tb testing.TB, personal []string, notes ...vault.NoteInput) *index.Store {
	tb.Helper()
	ctx := context.Background()
	s, err := index.Open(ctx, index.Options{
		Path:        filepath.Join(tb.TempDir(), "index.db"),
		Space:       testSpace,
		Sensitivity: index.Classifier{PersonalPaths: personal},
		Logger:      quietLog(),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if _, err := s.Feed().Apply(ctx, index.Batch{Upserts: notes}); err != nil {
		tb.Fatal(err)
	}
	embedAll(tb, s)
	return s
}

func embedAll(tb testing.TB, s *index.Store) {
	tb.Helper()
	ctx := context.Background()
	for {
		pending, err := s.Vectors().Backlog(ctx, 64, 64)
		if err != nil {
			tb.Fatal(err)
		}
		if len(pending) == 0 {
			return
		}
		vs := make([]index.Vector, len(pending))
		for i, p := range pending {
			vs[i] = index.Vector{RowID: p.RowID, Text: p.Text, Embedding: bagVector(p.Text)}
		}
		if _, err := s.Vectors().PutVectors(ctx, vs); err != nil {
			tb.Fatal(err)
		}
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testSettings are small sizes, so a handful of notes exceed every k.
func testSettings() Settings {
	return Settings{
		VectorTopK: 3, FTSTopK: 3, FusionTopK: 3, NoteFusion: true, MaxChunksPerDoc: 1,
		GraphEnabled: true, GraphMaxSiblings: 2, GraphDiscount: 0.7, GraphMaxSlots: 1,
		RerankTopK: 10, FinalTopK: 4, WebResults: 2,
		Coverage: map[string]CoverageModel{testSpace.Model: nearestWithin(0.8)},
	}
}

// nearestWithin is a coverage model that reads the nearest hit's distance
// and the question's words the vault lacks: covered within d, thin a
// little beyond, silent past d + 0.1 or when the vault lacks its words.
func nearestWithin(d float64) CoverageModel {
	return CoverageModel{Name: fmt.Sprintf("nearest within %g", d), Features: []string{"d1", "absent"}, Mean: []float64{d, 0}, Scale: []float64{0.05, 1},
		Weights: []float64{-1, -4}, Bias: 0, Thin: 0.5, Silent: 1 / (1 + math.Exp(2)), Grey: 0.6}
}

// alwaysThin is a coverage model under which every question is thin.
var alwaysThin = CoverageModel{Name: "always thin", Features: []string{"d1"}, Mean: []float64{0}, Scale: []float64{1},
	Weights: []float64{0}, Bias: 0, Thin: 0.9, Silent: 0.1, Grey: 0.95}

func mustPipeline(tb testing.TB, opts Options) *Pipeline {
	tb.Helper()
	if reflect.ValueOf(opts.Settings).IsZero() {
		opts.Settings = testSettings()
	}
	if opts.Logger == nil {
		opts.Logger = quietLog()
	}
	p, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func mustRetrieve(tb testing.TB, p *Pipeline, q Question) *Retrieval {
	tb.Helper()
	r, err := p.Retrieve(context.Background(), q)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func hitPaths(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Chunk.Path
	}
	return out
}

// fakeModel is an OpenAI-compatible chat server on loopback, used through
// the real llm.Client. reply scripts the answer as the pieces a stream
// sends; every request's messages and max_tokens are recorded.
type fakeModel struct {
	srv   *httptest.Server
	reply func(msgs []Message) []string
	// status, when set, is the HTTP status of every reply.
	status int
	// afterFirst, when set, is waited on after the first streamed piece.
	afterFirst chan struct{}

	mu        sync.Mutex
	requests  [][]Message
	maxTokens []int // each request's max_tokens, 0 when it had none
}

func newFakeModel(t *testing.T, reply func(msgs []Message) []string) *fakeModel {
	f := &fakeModel{reply: reply}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", f.chat)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeModel) client(t *testing.T) ChatModel {
	t.Helper()
	c, err := llm.NewClient("ollama/fake", llm.Options{BaseURL: f.srv.URL + "/v1", Getenv: func(string) string { return "" }, MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return llmChat{c}
}

func (f *fakeModel) recorded() [][]Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]Message(nil), f.requests...)
}

func (f *fakeModel) recordedMaxTokens() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.maxTokens...)
}

// llmChat is the real llm.Client as a ChatModel, converted as cmd/vaultask's
// adapter converts it (rag's tests may not import cmd).
type llmChat struct{ c *llm.Client }

func (m llmChat) Chat(ctx context.Context, req ChatRequest) (string, error) {
	reply, err := m.c.Chat(ctx, llmRequest(req))
	return reply, modelError(err)
}

func (m llmChat) Stream(ctx context.Context, req ChatRequest, onDelta func(string) error) (Usage, error) {
	u, err := m.c.Stream(ctx, llmRequest(req), onDelta)
	return Usage(u), modelError(err)
}

// modelError gives err the reason llm reads in it, for an answer that has
// to do without the model.
func modelError(err error) error {
	if err == nil {
		return nil
	}
	return &ModelError{Reason: llm.FailureReason(err), Err: err}
}

func llmRequest(req ChatRequest) llm.ChatRequest {
	msgs := make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = llm.Message(m)
	}
	return llm.ChatRequest{Messages: msgs, MaxTokens: req.MaxTokens}
}

func (f *fakeModel) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msgs []Message
	for _, m := range req.Messages {
		var text string
		if err := json.Unmarshal(m.Content, &text); err != nil {
			var parts []struct{ Text string }
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		msgs = append(msgs, Message{Role: m.Role, Content: text})
	}
	f.mu.Lock()
	f.requests = append(f.requests, msgs)
	f.maxTokens = append(f.maxTokens, req.MaxTokens)
	f.mu.Unlock()
	if f.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		fmt.Fprint(w, `{"error":{"message":"model overloaded"}}`)
		return
	}
	pieces := f.reply(msgs)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": strings.Join(pieces, "")}}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i, p := range pieces {
		chunk, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": p}}}})
		fmt.Fprintf(w, "data: %s\n\n", chunk)
		w.(http.Flusher).Flush()
		if i == 0 && f.afterFirst != nil {
			select {
			case <-f.afterFirst:
			case <-time.After(5 * time.Second):
				return
			}
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// fakeChat is a ChatModel with function fields, for the rerank stage.
type fakeChat struct {
	chat func(ctx context.Context, msgs []Message) (string, error)
}

func (f fakeChat) Chat(ctx context.Context, req ChatRequest) (string, error) {
	return f.chat(ctx, req.Messages)
}

func (f fakeChat) Stream(ctx context.Context, req ChatRequest, onDelta func(string) error) (Usage, error) {
	s, err := f.chat(ctx, req.Messages)
	if err != nil {
		return Usage{}, err
	}
	return Usage{PromptTokens: len(req.Messages), CompletionTokens: len(s)}, onDelta(s)
}

// fakeWeb is a WebSearcher with a function field that records its queries.
type fakeWeb struct {
	search  func(query string, n int) ([]WebResult, error)
	mu      sync.Mutex
	queries []string
}

func (f *fakeWeb) Search(_ context.Context, query string, n int) ([]WebResult, error) {
	f.mu.Lock()
	f.queries = append(f.queries, query)
	f.mu.Unlock()
	return f.search(query, n)
}

// countingSearcher counts the graph reads of a real store.
type countingSearcher struct {
	*index.Search
	neighbours atomic.Int32
}

func (c *countingSearcher) Hops(ctx context.Context, ids []string, scope vault.Scope) ([]vault.Hop, error) {
	c.neighbours.Add(1)
	return c.Search.Hops(ctx, ids, scope)
}

// stageHits are the hits the trace shows for the named stage.
func stageHits(r *Retrieval, name string) []HitView {
	for _, s := range r.Trace.Stages {
		if s.Name == name {
			return s.Hits
		}
	}
	return nil
}
