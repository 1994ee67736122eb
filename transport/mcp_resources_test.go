package transport

import (
	"encoding/json"
	"strings"
	"testing"
)

// rpcError calls method in a session and decodes the JSON-RPC error.
func rpcError(t *testing.T, url, session, method string, params any, header ...string) (code int, message string, data map[string]any) {
	t.Helper()
	resp := rpc(t, url, session, method, params, header...)
	body := string(readAll(t, resp))
	if i := strings.Index(body, "{"); i > 0 { // an SSE frame: "event: message\ndata: {…}"
		body = body[i:]
	}
	var out struct {
		Error *struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &out); err != nil || out.Error == nil {
		t.Fatalf("%s %v: want a JSON-RPC error: %v\n%s", method, params, err, body)
	}
	return out.Error.Code, out.Error.Message, out.Error.Data
}

// resources/read of a note that is not there, or not for this caller, is
// the resources spec's "resource not found" (-32002) naming the URI, the
// same for both; an allow_web that cannot be read is invalid params
// (-32602). Protocol version 2026-07-28 reports a missing resource as
// invalid params. Before, all of them were -32603, an internal error.
func TestMCPResourceReadErrors(t *testing.T) {
	hs, _ := testServer(t, testVault(t), upstream(t), Options{})
	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	read := func(uri string, header ...string) (int, string, map[string]any) {
		t.Helper()
		return rpcError(t, hs.URL, session, "resources/read", map[string]any{"uri": uri}, header...)
	}
	missing, personal := "vault://note/Garden/Knead%20log.md?allow_web=true", "vault://note/Diary/Knead%20log.md?allow_web=true"
	code, msg, data := read(missing)
	if code != -32002 || data["uri"] != missing {
		t.Errorf("a missing note: %d %q %v, want -32002 with its URI", code, msg, data)
	}
	pcode, pmsg, pdata := read(personal)
	if pcode != code || strings.ReplaceAll(pmsg, "Diary", "Garden") != msg || pdata["uri"] != personal || strings.Contains(pmsg, personalMark) {
		t.Errorf("a personal note under the open scope: %d %q %v; a missing one: %d %q", pcode, pmsg, pdata, code, msg)
	}
	if code, msg, _ := read("vault://note/Recipes/Bread.md?allow_web=TRUE"); code != -32602 || !strings.Contains(msg, "allow_web") {
		t.Errorf("a bad allow_web: %d %q, want -32602 naming allow_web", code, msg)
	}
	const modern = "2026-07-28"
	resp := rpc(t, hs.URL, "", "resources/read", map[string]any{"uri": missing, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion": modern, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}},
		"MCP-Protocol-Version", modern, "Mcp-Method", "resources/read", "Mcp-Name", missing)
	if body := string(readAll(t, resp)); !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "Garden/Knead log.md") {
		t.Errorf("a missing note in protocol version %s: %s, want -32602", modern, body)
	}
}
