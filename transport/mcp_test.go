package transport

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// rpc is one JSON-RPC call to /mcp as a streamable-HTTP client sends it.
func rpc(t *testing.T, url, session, method string, params any, header ...string) *http.Response {
	t.Helper()
	body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
	h := append([]string{"Accept", "application/json, text/event-stream"}, header...)
	if session != "" {
		h = append(h, "Mcp-Session-Id", session)
	}
	return do(t, http.MethodPost, url+"/mcp", body, h...)
}

func initialize(t *testing.T, url string, header ...string) *http.Response {
	t.Helper()
	return rpc(t, url, "", "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "go-test", "version": "1"}}, header...)
}

func TestMCPInstructionsFitClaudeCode(t *testing.T) {
	if n := len(mcpInstructions); n >= 2048 {
		t.Fatalf("MCP instructions are %d bytes; Claude Code truncates them at 2 KB", n)
	}
}

// A session id stays good across a restart of the server: Claude Code does
// not initialize again after a 404.
func TestMCPSessionSurvivesRestart(t *testing.T) {
	store, up := testVault(t), upstream(t)
	hs, _ := testServer(t, store, up, Options{})
	resp := initialize(t, hs.URL)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, session)
	}
	hs.Close()
	restarted, _ := testServer(t, store, up, Options{})
	resp = rpc(t, restarted.URL, session, "tools/list", map[string]any{})
	var out struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	decode(t, resp, &out)
	if resp.StatusCode != http.StatusOK || len(out.Result.Tools) != 4 {
		t.Fatalf("tools/list with the old session after a restart: %d %+v", resp.StatusCode, out)
	}
}

// /mcp refuses a web page's origin and a rebinding Host on a loopback
// connection, accepts the trusted hosts of a reverse proxy, and bounds the
// body.
func TestMCPTransportGuards(t *testing.T) {
	hs, _ := testServer(t, testVault(t), upstream(t), Options{CORSOrigins: []string{"app://obsidian.md"}, TrustedHosts: []string{"vault.home.arpa"}, MaxBodyBytes: 4096})
	for _, tc := range []struct {
		name   string
		header []string
		want   int
	}{
		{"no origin", nil, http.StatusOK},
		{"allowed origin", []string{"Origin", "app://obsidian.md"}, http.StatusOK},
		{"other origin", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"rebinding host", []string{"Host", "evil.example"}, http.StatusForbidden},
		{"trusted proxy host", []string{"Host", "vault.home.arpa:8443"}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if resp := initialize(t, hs.URL, tc.header...); resp.StatusCode != tc.want {
				t.Fatalf("initialize: %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	big := rpc(t, hs.URL, "", "tools/call", map[string]any{"name": "vault_search", "arguments": map[string]string{"query": strings.Repeat("x", 5000)}})
	if big.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over the limit: %d, want 413", big.StatusCode)
	}
}

// The Host check applies to loopback connections only: on any other
// address a Host header says nothing about rebinding.
func TestMCPHostCheckIsForLoopback(t *testing.T) {
	_, s := testServer(t, testVault(t), upstream(t), Options{})
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var ip string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ip = n.IP.String()
		}
	}
	if ip == "" {
		t.Skip("no non-loopback IPv4 address")
	}
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	hs := httptest.NewUnstartedServer(s)
	hs.Listener.Close()
	hs.Listener = l
	hs.Start()
	t.Cleanup(hs.Close)
	if resp := initialize(t, fmt.Sprintf("http://%s", l.Addr()), "Host", "vaultask.example"); resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize on %s with another Host: %d, want 200", l.Addr(), resp.StatusCode)
	}
}
