package transport

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/tstest/smallvault"
)

// Every entry point refuses allow_web spelled another way, repeated, or
// with a value that is not true or false, naming it: a query on /status,
// /status/notes, /events and /mcp, a vault:// URI, an MCP tool's
// arguments, a /v1 body. Before, "ALLOW_WEB=true" and {"Allow_Web": true}
// were skipped and the caller saw the whole vault, and of two keys in a
// body the last won.
func TestAllowWebRefusedEverywhere(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{})
	queries := []string{"ALLOW_WEB=true", "Allow_Web=true", "allowWeb=true", "allow_web=TRUE", "allow_web=1",
		"allow_web=true;", "allow_web=true&ALLOW_WEB=false", "allow_web=true&allow_web=false", "allow_web="}
	for _, path := range []string{"/status", "/status/notes", "/events"} {
		for _, q := range queries {
			resp := do(t, http.MethodGet, hs.URL+path+"?"+q, nil)
			if resp.StatusCode != http.StatusBadRequest { // /events would stream: no body read
				t.Errorf("GET %s?%s: %d, want 400", path, q, resp.StatusCode)
				continue
			}
			var e apiErr
			decode(t, resp, &e)
			if e.Error.Param == nil || *e.Error.Param != "allow_web" || !strings.Contains(e.Error.Message, "allow_web") {
				t.Errorf("GET %s?%s: %+v, want an error naming allow_web", path, q, e.Error)
			}
		}
	}
	for _, q := range queries {
		if resp := initialize(t, hs.URL+"?"+q); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("initialize on /mcp?%s: %d, want 400", q, resp.StatusCode)
		}
	}

	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	for _, q := range queries {
		body := mcpCall(t, hs.URL, session, "resources/read", map[string]any{"uri": "vault://note/Diary/Bread.md?" + q})
		if strings.Contains(body, smallvault.PersonalMark) || !strings.Contains(body, `"error"`) || !strings.Contains(body, "allow_web") {
			t.Errorf("resources/read vault://note/Diary/Bread.md?%s: %s, want an error naming allow_web", q, body)
		}
	}
	for _, args := range []string{`{"path":"Diary/Bread","Allow_Web":true}`, `{"path":"Diary/Bread","ALLOW_WEB":true}`,
		`{"path":"Diary/Bread","allow_web":true,"allow_web":false}`, `{"path":"Diary/Bread","allow_web":"true"}`} {
		raw := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vault_read","arguments":` + args + `}}`
		resp := do(t, http.MethodPost, hs.URL+"/mcp", raw, "Accept", "application/json, text/event-stream", "Mcp-Session-Id", session)
		body, _ := io.ReadAll(resp.Body)
		if strings.Contains(string(body), smallvault.PersonalMark) || !strings.Contains(string(body), `"isError":true`) || !strings.Contains(string(body), "allow_web") {
			t.Errorf("vault_read with %s: %s, want a tool error naming allow_web", args, body)
		}
	}

	for _, extra := range []string{`"Allow_Web":true`, `"allow_web":true,"ALLOW_WEB":false`, `"allow_web":true,"allow_web":false`, `"allow_web":"true"`, `"allow_web":null`} {
		body := `{"model":"vault-ask","messages":[{"role":"user","content":"how long do I knead the dough?"}],` + extra + `}`
		resp := do(t, http.MethodPost, hs.URL+"/v1/chat/completions", body)
		var e apiErr
		decode(t, resp, &e)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Param == nil || *e.Error.Param != "allow_web" {
			t.Errorf("/v1/chat/completions with %s: %d %+v, want 400 naming allow_web", extra, resp.StatusCode, e.Error)
		}
	}
}
