package transport

import (
	"io"
	"net/http"
	"testing"

	"github.com/vaultask/vaultask/tstest/smallvault"
)

// A session its client ended with DELETE is answered 404, every request
// of it, as the transport spec requires; other sessions go on, and so does
// one whose id this server did not sign (it only ever sees open notes).
// Before, the ended session answered ping and resources/list 200.
func TestMCPSessionEndedByItsClient(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{})
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

// EndStreams ends the MCP GET streams open, which only wait for what the
// server might send, and any opened after; requests go on being served
// (the answers and tool calls running at shutdown finish).
func TestEndStreamsEndsMCPStreams(t *testing.T) {
	hs, s := testServer(t, smallvault.Open(t), upstream(t), Options{})
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
