package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/fakellm"
)

// agentLoad is what a run of MCP clients looping searches did.
type agentLoad struct {
	calls, busy int           // tool calls made, and those refused as busy
	took        time.Duration // the slowest call that was answered
}

// loopSearches runs clients MCP clients against url, each in its own
// session calling vault_search with query back to back, until stop is
// closed or each has made most calls.
func loopSearches(t *testing.T, url string, clients, most int, query string, stop <-chan struct{}) agentLoad {
	t.Helper()
	var mu sync.Mutex
	var load agentLoad
	var wg sync.WaitGroup
	hc := &http.Client{Timeout: time.Minute}
	for range clients {
		session := mcpSession(t, hc, url)
		wg.Go(func() {
			for i := range most {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				body, _, err := mcpPost(hc, url, session, i+2, "tools/call", map[string]any{"name": "vault_search", "arguments": map[string]any{"query": query}})
				if err != nil {
					t.Errorf("vault_search: %v", err)
					return
				}
				mu.Lock()
				load.calls++
				if strings.Contains(body, `"isError":true`) {
					load.busy++
				} else {
					load.took = max(load.took, time.Since(start))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return load
}

// mcpSession opens an MCP session on url as a client does.
func mcpSession(t *testing.T, hc *http.Client, url string) string {
	t.Helper()
	_, session, err := mcpPost(hc, url, "", 1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "go-test", "version": "1"}})
	if err != nil || session == "" {
		t.Fatalf("initialize: session %q, %v", session, err)
	}
	return session
}

// mcpPost makes one JSON-RPC call, in a session unless session is "", and
// returns the response body and the session id it names; it is called
// from the load's goroutines, so it fails by error.
func mcpPost(hc *http.Client, url, session string, id int, method string, params any) (body, sessionID string, err error) {
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return "", "", err
	}
	r, err := http.NewRequest(http.MethodPost, url+"/mcp", bytes.NewReader(req))
	if err != nil {
		return "", "", err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := hc.Do(r)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return string(b), resp.Header.Get("Mcp-Session-Id"), err
}

// longQuery is a search of about n bytes in the vault's words, as an agent
// pasting a log or a page sends one.
func longQuery(n int) string {
	words := []string{"knead", "dough", "sourdough", "rise", "overnight", "fridge", "stir", "rice", "stock", "ladle", "minutes"}
	var b strings.Builder
	for i := 0; b.Len() < n-16; i++ {
		b.WriteString(words[i%len(words)] + " ")
	}
	return strings.TrimSpace(b.String())
}

// Issue 33's scenario against `vaultask serve` with its defaults: six MCP
// clients loop 16 KB searches, each holding its slot for the time its
// rerank takes (the fake cross-encoder answers after 150 ms, so the load
// costs no CPU), while 23 chat completions are asked one after another.
// Before answers had slots of their own most of them got 429 (21 of 23 in
// the issue, with the real embedder); now every one is answered, and the
// agents' searches are answered too: they wait for their share rather
// than fail.
func TestAgentsDoNotLockChatOut(t *testing.T) {
	if testing.Short() {
		t.Skip("a load of about 10 s")
	}
	srv, db, _ := serveVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	up.FirstToken, up.PerToken, up.RerankDelay = 20*time.Millisecond, 5*time.Millisecond, 150*time.Millisecond
	up.Reply = func([]fakellm.Message) string { return "Knead it for ten minutes." }
	env := append(couchEnv(t, srv, db), "VAULTASK_MODELS__GENERATION=ollama/fake", "VAULTASK_MODELS__GENERATION_BASE_URL="+up.URL(),
		"VAULTASK_MODELS__RERANK=llamacpp/bge-reranker-v2-m3", "VAULTASK_MODELS__RERANK_KIND=cross-encoder", "VAULTASK_MODELS__RERANK_BASE_URL="+up.URL())
	s := startServe(t, env)
	waitUntil(t, 30*time.Second, "/readyz 200", func() bool { return getJSON(t, s.url+"/readyz", &map[string]any{}) == http.StatusOK })

	stop := make(chan struct{})
	loaded := make(chan agentLoad)
	go func() { loaded <- loopSearches(t, s.url, 6, 200, longQuery(16<<10), stop) }()
	waitUntil(t, 10*time.Second, "the agents' searches to rerank", func() bool { return len(up.RerankRequests()) >= 6 })
	const chats = 23
	var refused []int
	var slowest time.Duration
	hc := &http.Client{Timeout: time.Minute}
	for i := range chats {
		body := fmt.Sprintf(`{"model":"vault-ask","messages":[{"role":"user","content":"How long do I knead sourdough, question %d?"}]}`, i)
		start := time.Now()
		resp, err := hc.Post(s.url+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		slowest = max(slowest, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			refused = append(refused, resp.StatusCode)
		}
	}
	close(stop)
	load := <-loaded
	t.Logf("chat completions: %d of %d refused %v, the slowest answered in %v; MCP: %d searches, %d refused as busy, the slowest answered in %v",
		len(refused), chats, refused, slowest.Round(time.Millisecond), load.calls, load.busy, load.took.Round(time.Millisecond))
	if len(refused) > 0 {
		t.Errorf("%d of %d chat completions were refused (%v) while MCP clients searched, want none", len(refused), chats, slices.Compact(refused))
	}
	if load.calls < 2*6 || load.busy > 0 {
		t.Errorf("the MCP clients made %d searches, %d refused as busy; want them to wait their turn", load.calls, load.busy)
	}
}
