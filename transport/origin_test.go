package transport

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/tstest/smallvault"
)

// A web page of another origin may not start answers or write settings
// through its visitor's browser, even with no API key: every method but
// GET, HEAD and OPTIONS from a foreign origin is refused, unless the origin
// is in api.cors_origins. Clients that send no Origin (curl, SDKs) and the
// server's own pages are unaffected.
func TestCrossOriginWritesRefused(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{Admin: adminOptions(t), CORSOrigins: []string{"app://obsidian.md"}})
	question := `{"model":"vault-ask","messages":[{"role":"user","content":"How long do I knead sourdough dough?"}]}`
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`
	routes := []struct {
		method, path, body string
		header             []string
		// sameOrigin is the status for the server's own origin.
		sameOrigin int
	}{
		{http.MethodPost, "/v1/chat/completions", question, nil, http.StatusOK},
		{http.MethodPut, "/admin/config", `{}`, []string{"X-API-Key", adminKey}, http.StatusOK},
		{http.MethodPost, "/mcp", initialize, []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, http.StatusOK},
	}
	for _, rt := range routes {
		for _, tc := range []struct {
			name   string
			header []string
			want   int
		}{
			{"foreign origin", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
			{"foreign origin, cross-site", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
			{"cross-site without an origin", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
			{"opaque origin", []string{"Origin", "null"}, http.StatusForbidden},
			{"another port of the same host", []string{"Origin", "http://127.0.0.1:1", "Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
			{"listed origin", []string{"Origin", "app://obsidian.md", "Sec-Fetch-Site", "cross-site"}, http.StatusOK},
			{"no origin", nil, http.StatusOK},
			{"own origin", []string{"Origin", hs.URL}, rt.sameOrigin},
			{"own origin, same-origin", []string{"Origin", hs.URL, "Sec-Fetch-Site", "same-origin"}, rt.sameOrigin},
		} {
			t.Run(rt.method+" "+rt.path+": "+tc.name, func(t *testing.T) {
				header := append([]string{"Content-Type", "text/plain"}, rt.header...)
				resp := do(t, rt.method, hs.URL+rt.path, rt.body, append(header, tc.header...)...)
				if resp.StatusCode != tc.want {
					t.Fatalf("%d, want %d", resp.StatusCode, tc.want)
				}
				if tc.want != http.StatusForbidden || strings.HasPrefix(tc.name, "own origin") {
					return
				}
				var e apiErr
				decode(t, resp, &e)
				if e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, "api.cors_origins") {
					t.Fatalf("the refusal does not say what to do: %+v", e.Error)
				}
			})
		}
	}
	// A page may still read: GET is not refused, CORS decides what the
	// browser lets it see.
	if resp := do(t, http.MethodGet, hs.URL+"/v1/models", nil, "Origin", "https://evil.example"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/models from another origin: %d", resp.StatusCode)
	}
}

// FuzzOwnLoopbackOrigin: an Origin is taken as the request's own only when
// it is scheme://Host, exactly, with Host a loopback address or localhost.
func FuzzOwnLoopbackOrigin(f *testing.F) {
	for _, c := range [][2]string{{"http://127.0.0.1:8080", "127.0.0.1:8080"}, {"http://localhost:1", "LOCALHOST:1"}, {"https://[::1]:8443", "[::1]:8443"},
		{"http://evil.example:8080", "evil.example:8080"}, {"http://127.0.0.1:8080/", "127.0.0.1:8080"}, {"null", ""}, {"http://", ""}, {"app://127.0.0.1", "127.0.0.1"},
		{"http://127.0.0.1.nip.io:8080", "127.0.0.1.nip.io:8080"}, {"http://a.localhost", "a.localhost"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, origin, host string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Host = host
		if !ownLoopbackOrigin(r, origin) {
			return
		}
		scheme, rest, _ := strings.Cut(origin, "://")
		name := hostOnly(host)
		ip, err := netip.ParseAddr(name)
		if scheme != "http" && scheme != "https" || !strings.EqualFold(rest, host) || !(err == nil && ip.IsLoopback() || isLocalhost(name)) {
			t.Fatalf("Origin %q taken as the own origin of Host %q", origin, host)
		}
	})
}
