package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/tstest/fakellm"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// upstream is the fake generation model; it cites the first passage.
func upstream(t *testing.T) *fakellm.Server {
	t.Helper()
	up := fakellm.New()
	up.Reply = func(msgs []fakellm.Message) string {
		last := msgs[len(msgs)-1].Content
		if _, q, ok := strings.Cut(last, "Last message: "); ok {
			return "sourdough " + q // the standalone rewrite of a follow-up
		}
		if i := strings.Index(last, `cite="`); i >= 0 {
			cite := last[i+6:]
			return "Knead it for ten minutes " + cite[:strings.Index(cite, `"`)] + " and let it rise."
		}
		return rag.SilentAnswer
	}
	t.Cleanup(up.Close)
	return up
}

// llmChat is the real llm.Client as rag's ChatModel, converted as
// cmd/vaultask's adapter converts it.
type llmChat struct{ c *llm.Client }

func (m llmChat) Chat(ctx context.Context, req rag.ChatRequest) (string, error) {
	reply, err := m.c.Chat(ctx, llmRequest(req))
	return reply, modelError(err)
}

func (m llmChat) Stream(ctx context.Context, req rag.ChatRequest, onDelta func(string) error) (rag.Usage, error) {
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

// testPipeline is a real pipeline over store whose generation model is up.
func testPipeline(t *testing.T, store *index.Store, up *fakellm.Server) *rag.Pipeline {
	t.Helper()
	gen, err := llm.NewClient("ollama/fake", llm.Options{BaseURL: up.URL(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	p, err := rag.New(rag.Options{Searcher: store.Search(), Generator: llmChat{gen}, Logger: quietLog(), Settings: rag.Settings{
		VectorTopK: 10, FTSTopK: 10, FusionTopK: 10, MaxChunksPerDoc: 2, GraphEnabled: true, GraphMaxSiblings: 3,
		GraphDiscount: 0.7, GraphMaxSlots: 1, RerankTopK: 10, FinalTopK: 4,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testServer serves store through testPipeline, with opts over the
// defaults; opts.Answerer, when set, answers in its place.
func testServer(t *testing.T, store *index.Store, up *fakellm.Server, opts Options) (*httptest.Server, *Server) {
	t.Helper()
	if opts.Answerer == nil {
		opts.Answerer = testPipeline(t, store, up)
	}
	opts.Notes = store.Browse()
	if opts.Status == nil {
		opts.Status = func(context.Context) Status {
			return Status{Version: "test", Feed: FeedStatus{Source: "folder", CaughtUp: true}}
		}
	}
	if opts.Events == nil {
		opts.Events = NewEvents(10, 4)
	}
	opts.Logger = quietLog()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s
}

// do sends a request with a JSON body (none for nil) and header pairs.
func do(t *testing.T, method, url string, body any, header ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = strings.NewReader(string(j))
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1] // the client sends req.Host, not a header
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func decode(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v\n%s", resp.Request.URL, err, b)
	}
}

// apiErr is the OpenAI error shape, as a client reads it.
type apiErr struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// sseEvent is one Server-Sent Event as a client parses it.
type sseEvent struct {
	id, event, data string
	comment         bool
	at              time.Time
}

// readSSE parses an event stream until it ends, stopping early when stop
// reports true for an event.
func readSSE(t *testing.T, body io.Reader, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" || cur.comment || cur.event != "" {
				cur.at = time.Now()
				out = append(out, cur)
				if stop != nil && stop(cur) {
					return out
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, ":"):
			cur.comment = true
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	return out
}
