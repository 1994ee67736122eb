package transport

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/tstest/smallvault"
)

// rpc is one JSON-RPC call to /mcp as a streamable-HTTP client sends it;
// a query on url goes on /mcp.
func rpc(t *testing.T, url, session, method string, params any, header ...string) *http.Response {
	t.Helper()
	body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
	h := append([]string{"Accept", "application/json, text/event-stream"}, header...)
	if session != "" {
		h = append(h, "Mcp-Session-Id", session)
	}
	endpoint := url + "/mcp"
	if base, query, ok := strings.Cut(url, "?"); ok {
		endpoint = base + "/mcp?" + query
	}
	return do(t, http.MethodPost, endpoint, body, h...)
}

func initialize(t *testing.T, url string, header ...string) *http.Response {
	t.Helper()
	return rpc(t, url, "", "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "go-test", "version": "1"}}, header...)
}

// /mcp refuses a web page's origin and a rebinding Host on a loopback
// connection, accepts the trusted hosts of a reverse proxy, and bounds the
// body.
func TestMCPTransportGuards(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{CORSOrigins: []string{"app://obsidian.md"}, TrustedHosts: []string{"vault.home.arpa"}, MaxBodyBytes: 4096})
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
		// The server's own origin on a loopback Host is its own page (the
		// conformance suite's dns-rebinding scenario); before, 403.
		{"own loopback origin", []string{"Origin", hs.URL}, http.StatusOK},
		{"own localhost origin", []string{"Host", "localhost:8080", "Origin", "http://localhost:8080"}, http.StatusOK},
		{"own IPv6 loopback origin", []string{"Host", "[::1]:8080", "Origin", "http://[::1]:8080"}, http.StatusOK},
		{"another loopback port", []string{"Origin", "http://127.0.0.1:1"}, http.StatusForbidden},
		{"another loopback name", []string{"Host", "127.0.0.1:8080", "Origin", "http://localhost:8080"}, http.StatusForbidden},
		{"a trusted name's own origin", []string{"Host", "vault.home.arpa:8443", "Origin", "https://vault.home.arpa:8443"}, http.StatusForbidden},
		{"rebinding host, its own origin", []string{"Host", "evil.example.com", "Origin", "http://evil.example.com"}, http.StatusForbidden},
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

// On a connection to a non-loopback address a name is refused while no API
// key is set (a rebinding page reaches a LAN server as well as a loopback
// one) and accepted with a key, which such a page cannot send.
func TestHostCheckOnANonLoopbackAddress(t *testing.T) {
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
	for _, tc := range []struct {
		name, key, host string
		want            int
	}{
		{"no key, a name", "", "vaultask.example", http.StatusForbidden},
		{"no key, the address", "", ip, http.StatusOK},
		{"a key, a name", "k", "vaultask.example", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := testServer(t, smallvault.Open(t), upstream(t), Options{APIKey: tc.key})
			l, err := net.Listen("tcp", ip+":0")
			if err != nil {
				t.Skipf("cannot listen on %s: %v", ip, err)
			}
			hs := httptest.NewUnstartedServer(s)
			hs.Listener.Close()
			hs.Listener = l
			hs.Start()
			t.Cleanup(hs.Close)
			resp := do(t, http.MethodGet, fmt.Sprintf("http://%s/v1/models", l.Addr()), nil, "Host", tc.host, "Authorization", "Bearer "+tc.key)
			if resp.StatusCode != tc.want {
				t.Fatalf("GET /v1/models on %s as %q: %d, want %d", l.Addr(), tc.host, resp.StatusCode, tc.want)
			}
		})
	}
}

// Every route but the health checks refuses a Host that is a name nobody
// trusted: the API, MCP, the events, the status and the pages alike, so a
// page that rebinds its own name to this server reads nothing. An IP
// address, localhost and a trusted name pass; the refusal says what to set.
func TestRebindingHostRefusedEverywhere(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{TrustedHosts: []string{"vault.home.arpa"}})
	for _, path := range []string{"/v1/models", "/events", "/status", "/status/notes", "/chat", "/admin", "/chat/config", "/mcp"} {
		resp := do(t, http.MethodGet, hs.URL+path, nil, "Host", "evil.example:8080")
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "api.trusted_hosts") {
			t.Errorf("GET %s as evil.example: %d %s, want 403 naming api.trusted_hosts", path, resp.StatusCode, body)
		}
	}
	for _, host := range []string{"127.0.0.1:8080", "localhost", "pantry.localhost:8080", "VAULT.home.arpa", "[::1]:8080"} {
		if resp := do(t, http.MethodGet, hs.URL+"/v1/models", nil, "Host", host); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /v1/models as %s: %d, want 200", host, resp.StatusCode)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp := do(t, http.MethodGet, hs.URL+path, nil, "Host", "vaultask-container"); resp.StatusCode == http.StatusForbidden {
			t.Errorf("GET %s as a container name: 403, want the health answer", path)
		}
	}
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
