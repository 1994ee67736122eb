package transport

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Query strings: allow_web once, true or false exactly; any other spelling
// of it, a repeat, or a query that cannot be read is an error naming it.
func TestAllowWebQuery(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
		bad   bool
	}{
		{"", false, false},
		{"state=indexed&path=x", false, false},
		{"allow_web=true", true, false},
		{"allow_web=false", false, false},
		{"path=a%26b&allow_web=true&limit=3", true, false},
		{"allow%5Fweb=true", true, false},
		{"allowance=true&web=x", false, false},
		{"allow_webs=true", false, false},
		{"ALLOW_WEB=true", false, true},
		{"Allow_Web=true", false, true},
		{"allowWeb=true", false, true},
		{"allow-web=true", false, true},
		{"allow_web+=true", false, true},
		{"allow%5FWEB=true", false, true},
		{"allow_web=true&ALLOW_WEB=false", false, true},
		{"allow_web=true&allow_web=true", false, true},
		{"allow_web", false, true},
		{"allow_web=", false, true},
		{"allow_web=TRUE", false, true},
		{"allow_web=1", false, true},
		{"allow_web=yes", false, true},
		{"allow_web=true;", false, true},
		{"x=1;allow_web=true", false, true},
		{"allow_web=%ZZ", false, true},
		{"allow_w%ZZeb=true", false, true},
	} {
		got, err := allowWebQuery(tc.query)
		if tc.bad {
			var ae *allowWebError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "allow_web") {
				t.Errorf("allowWebQuery(%q) = %v, %v; want an error naming allow_web", tc.query, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("allowWebQuery(%q) = %v, %v; want %v", tc.query, got, err, tc.want)
		}
	}
}

// JSON objects: allow_web once, a JSON boolean; any other spelling of it
// (escapes decoded as encoding/json decodes them) or a repeat is an error
// naming it.
func TestAllowWebJSON(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
		bad  bool
	}{
		{``, false, false},
		{`null`, false, false},
		{`{}`, false, false},
		{`{"allow_web":true}`, true, false},
		{`{"allow_web":false}`, false, false},
		{`{"messages":[{"allow_web":true}],"allow_web":false}`, false, false},
		{`{"nested":{"ALLOW_WEB":false},"allow_web":true}`, true, false},
		{` {"allow\u005fweb" : true} `, true, false},
		{`{"Allow_Web":true}`, false, true},
		{`{"ALLOW_WEB":false}`, false, true},
		{`{"allowWeb":true}`, false, true},
		{`{"\u0041llow_web":true}`, false, true},
		{`{"allow_web":true,"ALLOW_WEB":false}`, false, true},
		{`{"allow_web":true,"allow_web":false}`, false, true},
		{`{"allow_web":"true"}`, false, true},
		{`{"allow_web":1}`, false, true},
		{`{"allow_web":null}`, false, true},
		{`{"allow_web":{}}`, false, true},
		{`[]`, false, true},
		{`"allow_web"`, false, true},
		{`{"allow_web":tru}`, false, true},
		{`{"a":`, false, true},
	} {
		got, err := allowWebJSON([]byte(tc.body))
		if tc.bad {
			var ae *allowWebError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "allow_web") {
				t.Errorf("allowWebJSON(%s) = %v, %v; want an error naming allow_web", tc.body, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("allowWebJSON(%s) = %v, %v; want %v", tc.body, got, err, tc.want)
		}
	}
}

// FuzzAllowWebQuery: any query string is read without a panic, refused with
// an error naming allow_web, or read as url.ParseQuery reads it, where no
// name but allow_web itself is allow_web in any case and it came at most
// once, as true or false.
func FuzzAllowWebQuery(f *testing.F) {
	for _, s := range []string{"", "allow_web=true", "allow_web=false&x=1", "ALLOW_WEB=true", "allow_web=true&allow_web=true", "allow_web=TRUE",
		"allow%5Fweb=true", "allow_web=true;", "a=%ZZ", "allowWeb=1", "allow_web", "=&&=", "allow+web=true"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		got, err := allowWebQuery(query)
		if err != nil {
			var ae *allowWebError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "allow_web") {
				t.Fatalf("allowWebQuery(%q): %v is not an error naming allow_web", query, err)
			}
			return
		}
		q, _ := url.ParseQuery(query) // the pairs it can read: a pair of another name may hold a bad escape
		for name, vs := range q {
			if strings.EqualFold(name, "allow_web") && (name != "allow_web" || len(vs) != 1 || vs[0] != "true" && vs[0] != "false") {
				t.Fatalf("allowWebQuery(%q) = %v, but the query has %s=%q", query, got, name, vs)
			}
		}
		if want := q.Get("allow_web") == "true"; got != want {
			t.Fatalf("allowWebQuery(%q) = %v, want %v", query, got, want)
		}
	})
}

// FuzzAllowWebJSON: any bytes are read without a panic, refused with an
// error naming allow_web, or read as the lenient reader, encoding/json,
// reads allow_web from them whenever it can: no spelling or repeat makes
// the two disagree.
func FuzzAllowWebJSON(f *testing.F) {
	for _, s := range []string{`{"allow_web":true}`, `{"allow_web":false,"x":[1,{"allow_web":true}]}`, `{"ALLOW_WEB":true}`,
		`{"allow_web":true,"allow_web":false}`, `{"allow\u005fweb":true}`, `{"\u0061llow_WEB":false}`, `null`, `[]`, `{}`, ``,
		`{"allow_web":"true"}`, `{"allow_web":true} {"allow_web":false}`, `{"allowweb":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := allowWebJSON(body)
		if err != nil {
			var ae *allowWebError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "allow_web") {
				t.Fatalf("allowWebJSON(%q): %v is not an error naming allow_web", body, err)
			}
			return
		}
		var lenient struct {
			AllowWeb *bool `json:"allow_web"`
		}
		if json.Unmarshal(body, &lenient) != nil {
			return
		}
		if want := lenient.AllowWeb != nil && *lenient.AllowWeb; got != want {
			t.Fatalf("allowWebJSON(%q) = %v, encoding/json reads %v", body, got, want)
		}
	})
}

// Every entry point refuses allow_web spelled another way, repeated, or
// with a value that is not true or false, naming it: a query on /status,
// /status/notes, /events and /mcp, a vault:// URI, an MCP tool's
// arguments, a /v1 body. Before, "ALLOW_WEB=true" and {"Allow_Web": true}
// were skipped and the caller saw the whole vault, and of two keys in a
// body the last won.
func TestAllowWebRefusedEverywhere(t *testing.T) {
	hs, _ := testServer(t, testVault(t), upstream(t), Options{})
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
		if strings.Contains(body, personalMark) || !strings.Contains(body, `"error"`) || !strings.Contains(body, "allow_web") {
			t.Errorf("resources/read vault://note/Diary/Bread.md?%s: %s, want an error naming allow_web", q, body)
		}
	}
	for _, args := range []string{`{"path":"Diary/Bread","Allow_Web":true}`, `{"path":"Diary/Bread","ALLOW_WEB":true}`,
		`{"path":"Diary/Bread","allow_web":true,"allow_web":false}`, `{"path":"Diary/Bread","allow_web":"true"}`} {
		raw := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vault_read","arguments":` + args + `}}`
		resp := do(t, http.MethodPost, hs.URL+"/mcp", raw, "Accept", "application/json, text/event-stream", "Mcp-Session-Id", session)
		body, _ := io.ReadAll(resp.Body)
		if strings.Contains(string(body), personalMark) || !strings.Contains(string(body), `"isError":true`) || !strings.Contains(string(body), "allow_web") {
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
