package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/rag"
)

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// testServer serves store's notes, retrieved by a real pipeline (no
// generation model: a search needs none), with opts over the defaults: a
// slot for every tool call, and a refusal answered with its status and
// message.
func testServer(t *testing.T, store *index.Store, opts Options) (*httptest.Server, *Server) {
	t.Helper()
	p, err := rag.New(rag.Options{Searcher: store.Search(), Logger: quietLog(), Settings: rag.Settings{
		VectorTopK: 10, FTSTopK: 10, FusionTopK: 10, MaxChunksPerDoc: 2, GraphEnabled: true, GraphMaxSiblings: 3,
		GraphDiscount: 0.7, GraphMaxSlots: 1, RerankTopK: 10, FinalTopK: 4,
	}})
	if err != nil {
		t.Fatal(err)
	}
	opts.Retriever, opts.Notes, opts.Logger = p, store.Browse(), quietLog()
	opts.Slot = func(context.Context) (func(), error) { return func() {}, nil }
	opts.Refuse = func(w http.ResponseWriter, r Refusal) { http.Error(w, r.Code+" "+r.Message, r.Status) }
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s
}

// rpc is one JSON-RPC call to the server as a streamable-HTTP client
// sends it, with header pairs; url may hold a query.
func rpc(t *testing.T, url, session, method string, params any, header ...string) *http.Response {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(sessionHeader, session)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func initialize(t *testing.T, url string) *http.Response {
	t.Helper()
	return rpc(t, url, "", "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "go-test", "version": "1"}})
}

// mcpCall calls a tool (or reads a resource) in a session and returns the
// response body, which holds the text and the structured content alike.
func mcpCall(t *testing.T, url, session, method string, params any) string {
	t.Helper()
	resp := rpc(t, url, session, method, params)
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %v: %d %s %v", method, params, resp.StatusCode, body, err)
	}
	return string(body)
}

// message is the JSON-RPC message of a response body, which may be an SSE
// frame ("event: message\ndata: {…}").
func message(body string) []byte {
	if i := strings.Index(body, "{"); i > 0 {
		body = body[i:]
	}
	return []byte(strings.TrimSpace(body))
}

// rpcResult calls method in a session and decodes the JSON-RPC result.
func rpcResult(t *testing.T, url, session, method string, params, result any) {
	t.Helper()
	body := mcpCall(t, url, session, method, params)
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  any             `json:"error"`
	}
	if err := json.Unmarshal(message(body), &out); err != nil || out.Error != nil {
		t.Fatalf("%s: %v %v\n%s", method, err, out.Error, body)
	}
	if err := json.Unmarshal(out.Result, result); err != nil {
		t.Fatalf("%s: %v\n%s", method, err, out.Result)
	}
}

// rpcError calls method in a session and decodes the JSON-RPC error.
func rpcError(t *testing.T, url, session, method string, params any, header ...string) (code int, msg string, data map[string]any) {
	t.Helper()
	body, err := io.ReadAll(rpc(t, url, session, method, params, header...).Body)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Error *struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(message(string(body)), &out); err != nil || out.Error == nil {
		t.Fatalf("%s %v: want a JSON-RPC error: %v\n%s", method, params, err, body)
	}
	return out.Error.Code, out.Error.Message, out.Error.Data
}
