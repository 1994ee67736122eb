package transport

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vaultask/vaultask/vault"
)

// testSessionKey is a session key the servers of a test share, as a
// restarted serve reads the same key file.
var testSessionKey = bytes.Repeat([]byte{7}, SessionKeyLen)

// A session id says its scope, signed: it verifies under its key only, and
// no edit of it verifies as another scope.
func TestSessionIDs(t *testing.T) {
	sg, err := newSessionSigner(testSessionKey)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newSessionSigner(bytes.Repeat([]byte{8}, SessionKeyLen))
	for _, scope := range []vault.Scope{vault.ScopeOpen, vault.ScopeAll} {
		id := sg.mint(scope)
		if got, ok := sg.scope(id); !ok || got != scope {
			t.Errorf("%s: scope %v, %v; want %v", id, got, ok, scope)
		}
		if got, ok := other.scope(id); ok || got != vault.ScopeOpen {
			t.Errorf("%s under another key: %v, %v; want open, not ok", id, got, ok)
		}
		if id == sg.mint(scope) {
			t.Errorf("two sessions got the same id %s", id)
		}
	}
	open := sg.mint(vault.ScopeOpen)
	for _, forged := range []string{strings.Replace(open, ".open.", ".all.", 1), open[:len(open)-1], open + "A", "v1.all..", "v1.all.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
		"mcp-session-1b7e4c2a-5d6f-4c1e-9a0b-3f2e1d0c9b8a", "", "...."} {
		if got, ok := sg.scope(forged); ok || got != vault.ScopeOpen {
			t.Errorf("%q: %v, %v; want open, not ok", forged, got, ok)
		}
	}
	if _, err := newSessionSigner([]byte("short")); err == nil {
		t.Error("a 5-byte session key was taken")
	}
}

// FuzzSessionScope: any id reads without a panic; one that does not verify
// is open-only, and one that verifies says its scope in its second part.
func FuzzSessionScope(f *testing.F) {
	sg, _ := newSessionSigner(testSessionKey)
	open, all := sg.mint(vault.ScopeOpen), sg.mint(vault.ScopeAll)
	for _, s := range []string{open, all, strings.Replace(open, ".open.", ".all.", 1), "", "v1.all.x.y", "....", "v1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		scope, ok := sg.scope(id)
		parts := strings.Split(id, ".")
		switch {
		case !ok && scope != vault.ScopeOpen:
			t.Fatalf("%q does not verify but has scope %v", id, scope)
		case ok && (len(parts) != 4 || parts[1] != scope.String()):
			t.Fatalf("%q verifies as %v", id, scope)
		}
	})
}

// The cache holds at most max sessions, dropping the least recently used,
// and drops a session unused for idle; a use keeps it.
func TestSessionCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var dropped []string
		c := newSessionCache(3, time.Minute, func(id string) {
			mu.Lock()
			defer mu.Unlock()
			dropped = append(dropped, id)
		}, quietLog())
		droppedNow := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(dropped)
		}
		for _, id := range []string{"a", "b", "c"} {
			c.add(id)
		}
		c.touch("a")
		c.add("d")
		if got := droppedNow(); !slices.Equal(got, []string{"b"}) || c.len() != 3 {
			t.Fatalf("after a fourth session: dropped %v, %d held; want b, the least recently used, and 3", got, c.len())
		}
		c.remove("c") // mcp-go let it go (a DELETE)
		time.Sleep(40 * time.Second)
		c.touch("d")
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if got := droppedNow(); !slices.Equal(got, []string{"b", "a"}) || c.len() != 1 {
			t.Fatalf("70s on: dropped %v, %d held; want a too (unused for 70s), d kept (used 30s ago)", got, c.len())
		}
		time.Sleep(31 * time.Second)
		synctest.Wait()
		if got := droppedNow(); !slices.Equal(got, []string{"b", "a", "d"}) || c.len() != 0 {
			t.Fatalf("101s on: dropped %v, %d held; want d too", got, c.len())
		}
		c.add("e") // the sweep is set again for a cache that was empty
		time.Sleep(61 * time.Second)
		synctest.Wait()
		if c.len() != 0 {
			t.Fatalf("a session added to an empty cache is held after its idle time")
		}
	})
}

// readPersonal reads a personal note with vault_read, not asking for
// allow_web, on url in a session, and reports whether the personal text
// came back.
func readPersonal(t *testing.T, url, session string) bool {
	t.Helper()
	body := mcpCall(t, url, session, "tools/call", map[string]any{"name": "vault_read", "arguments": map[string]any{"path": "Diary/Bread"}})
	return strings.Contains(body, personalMark)
}

// A session's scope is the one it was opened with, for its whole life: a
// session opened on /mcp?allow_web=true sees open notes only whatever URL
// later requests use, a forged or foreign id sees open notes only, and
// both kinds keep their scope after the server drops what it held of them
// and after a restart with the same key. Before, the scope was each
// request's URL's: the open session read a personal note on /mcp.
func TestMCPSessionScopeOutlivesItsURLEvictionAndRestart(t *testing.T) {
	store, up := testVault(t), upstream(t)
	opts := Options{SessionKey: testSessionKey, MaxMCPSessions: 2}
	hs, s := testServer(t, store, up, opts)
	open := initialize(t, hs.URL+"?allow_web=true").Header.Get("Mcp-Session-Id")
	whole := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	if open == "" || whole == "" {
		t.Fatal("initialize gave no session id")
	}
	check := func(when, url string) {
		t.Helper()
		if !readPersonal(t, url, whole) {
			t.Errorf("%s: the whole vault's session does not read a personal note", when)
		}
		if readPersonal(t, url, open) {
			t.Errorf("%s: the session opened on /mcp?allow_web=true read a personal note", when)
		}
	}
	check("on /mcp", hs.URL)
	for _, forged := range []string{strings.Replace(open, ".open.", ".all.", 1), "v1.all.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA", "mcp-session-made-up"} {
		if readPersonal(t, hs.URL, forged) {
			t.Errorf("the session id %q read a personal note", forged)
		}
		var list struct {
			Resources []struct{ Name string } `json:"resources"`
		}
		rpcResult(t, hs.URL, forged, "resources/list", map[string]any{}, &list)
		if len(list.Resources) == 0 || slices.ContainsFunc(list.Resources, func(r struct{ Name string }) bool { return strings.HasPrefix(r.Name, "Diary/") }) {
			t.Errorf("resources/list in the session %q: %+v, want open notes only", forged, list.Resources)
		}
	}
	if readPersonal(t, hs.URL+"?allow_web=true", whole) {
		t.Error("the whole vault's session read a personal note on /mcp?allow_web=true")
	}

	for range 3 {
		initialize(t, hs.URL)
	}
	if n := s.sessions.cache.len(); n != 2 {
		t.Fatalf("%d sessions held, want 2 (api's max)", n)
	}
	check("after the server dropped both sessions", hs.URL)

	hs.Close()
	restarted, _ := testServer(t, store, up, opts)
	check("after a restart", restarted.URL)
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	rpcResult(t, restarted.URL, whole, "tools/list", map[string]any{}, &tools)
	if len(tools.Tools) != 4 {
		t.Errorf("tools/list after a restart: %+v", tools)
	}

	rekeyed, _ := testServer(t, store, up, Options{SessionKey: bytes.Repeat([]byte{9}, SessionKeyLen)})
	if readPersonal(t, rekeyed.URL, whole) {
		t.Error("a server with another key took the whole vault's session id as its own")
	}
}

// 3000 initialize calls leave at most the cache's sessions held, and the
// heap about where it was: before, each kept ~11 KB for good (33 MB here).
// Sessions unused for the idle time are let go of too.
func TestMCPSessionsAreFreed(t *testing.T) {
	hs, s := testServer(t, testVault(t), upstream(t), Options{MaxMCPSessions: 10, MCPSessionIdle: time.Second})
	initialize(t, hs.URL) // the server's first use allocates what it keeps
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	const calls = 3000
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`
	for range calls {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %d", resp.StatusCode)
		}
	}
	grown := int64(heap()) - int64(before)
	if n := s.sessions.cache.len(); n > 10 {
		t.Errorf("%d sessions held after %d initialize calls, want at most 10", n, calls)
	}
	if grown > 8<<20 {
		t.Errorf("the heap grew by %.1f MB over %d initialize calls", float64(grown)/(1<<20), calls)
	}
	t.Logf("heap %+.1f MB over %d initialize calls", float64(grown)/(1<<20), calls)
	deadline := time.Now().Add(10 * time.Second)
	for s.sessions.cache.len() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := s.sessions.cache.len(); n != 0 {
		t.Errorf("%d sessions held 10s after the last use, want none (idle 1s)", n)
	}
}

// A session its client ended with DELETE is answered 404, every request
// of it, as the transport spec requires; other sessions go on, and so does
// one whose id this server did not sign (it only ever sees open notes).
// Before, the ended session answered ping and resources/list 200.
func TestMCPSessionEndedByItsClient(t *testing.T) {
	hs, _ := testServer(t, testVault(t), upstream(t), Options{})
	ended := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	other := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	mcpCall(t, hs.URL, ended, "ping", map[string]any{})
	if resp := do(t, http.MethodDelete, hs.URL+"/mcp", nil, "Mcp-Session-Id", ended); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	for _, method := range []string{"ping", "resources/list", "tools/list"} {
		resp := rpc(t, hs.URL, ended, method, map[string]any{})
		var e apiErr
		decode(t, resp, &e)
		if resp.StatusCode != http.StatusNotFound || deref(e.Error.Code) != "session_terminated" {
			t.Errorf("%s in the ended session: %d %+v, want 404", method, resp.StatusCode, e.Error)
		}
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		if resp := do(t, method, hs.URL+"/mcp", nil, "Mcp-Session-Id", ended, "Accept", "text/event-stream"); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s /mcp of the ended session: %d, want 404", method, resp.StatusCode)
		}
	}
	mcpCall(t, hs.URL, other, "ping", map[string]any{})
	const madeUp = "mcp-session-1b7e4c2a-5d6f-4c1e-9a0b-3f2e1d0c9b8a"
	do(t, http.MethodDelete, hs.URL+"/mcp", nil, "Mcp-Session-Id", madeUp)
	mcpCall(t, hs.URL, madeUp, "ping", map[string]any{})
}

// The ids of ended sessions are bounded: past max the oldest is forgotten.
func TestEndedSessionsAreBounded(t *testing.T) {
	e := newEndedSessions(3)
	for _, id := range []string{"a", "b", "b", "c", "d", "e"} {
		e.add(id)
	}
	var kept []string
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if e.has(id) {
			kept = append(kept, id)
		}
	}
	if strings.Join(kept, ",") != "c,d,e" || len(e.ids) != 3 {
		t.Errorf("kept %v of %d, want the last three, c, d and e", kept, len(e.ids))
	}
}

// EndStreams ends the MCP GET streams open, which only wait for what the
// server might send, and any opened after; requests go on being served
// (the answers and tool calls running at shutdown finish).
func TestEndStreamsEndsMCPStreams(t *testing.T) {
	hs, s := testServer(t, testVault(t), upstream(t), Options{})
	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	listen := func() *http.Response {
		t.Helper()
		resp := do(t, http.MethodGet, hs.URL+"/mcp", nil, "Mcp-Session-Id", session, "Accept", "text/event-stream")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("GET /mcp: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		return resp
	}
	open := listen()
	ended := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(open.Body)
		ended <- err
	}()
	s.EndStreams()
	if err := <-ended; err != nil {
		t.Fatalf("the stream was cut, not ended: %v", err)
	}
	if _, err := io.ReadAll(listen().Body); err != nil {
		t.Fatalf("a stream opened after EndStreams: %v", err)
	}
	mcpCall(t, hs.URL, session, "tools/list", map[string]any{})
}
