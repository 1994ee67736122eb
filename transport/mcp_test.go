package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
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

func TestMCPInstructionsFitClaudeCode(t *testing.T) {
	if n := len(mcpInstructions); n >= 2048 {
		t.Fatalf("MCP instructions are %d bytes; Claude Code truncates them at 2 KB", n)
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
			_, s := testServer(t, testVault(t), upstream(t), Options{APIKey: tc.key})
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
	hs, _ := testServer(t, testVault(t), upstream(t), Options{TrustedHosts: []string{"vault.home.arpa"}})
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

// Every tool and the note resource, called with allow_web=true, see open
// notes only: the personal notes outnumber what a search returns, a
// personal note refused by path reads exactly like a missing one, a name
// both sides share resolves to the open note without a "did you mean", the
// topic's member count leaves the personal clipping out, and every
// resource link handed out under the open scope reads under it again.
func TestMCPAllowWebSeesOpenNotesOnly(t *testing.T) {
	hs, _ := testServer(t, testVault(t), upstream(t), Options{})
	resp := initialize(t, hs.URL)
	session := resp.Header.Get("Mcp-Session-Id")
	tool := func(name string, args map[string]any) string {
		return mcpCall(t, hs.URL, session, "tools/call", map[string]any{"name": name, "arguments": args})
	}
	leaks := func(what, body string) {
		t.Helper()
		// The open topic note's own text links to [[Diary/Bread]]: that text is
		// open; a personal note as a result, a neighbour or a link is not.
		if strings.Contains(body, personalMark) || strings.Contains(body, `"path":"Diary`) || strings.Contains(body, "note/Diary") {
			t.Errorf("%s with allow_web=true shows a personal note: %s", what, body)
		}
	}
	search := tool("vault_search", map[string]any{"query": "knead dough sourdough rise", "k": 2, "allow_web": true})
	leaks("vault_search", search)
	if !strings.Contains(search, "Sourdough bread") || !strings.Contains(search, `allow_web=true`) {
		t.Errorf("vault_search: want the open note with resource links under the open scope: %s", search)
	}
	if whole := tool("vault_search", map[string]any{"query": "knead dough sourdough rise", "k": 2}); !strings.Contains(whole, `"path":"Diary`) {
		t.Errorf("vault_search without allow_web misses the personal notes, so the test proves nothing: %s", whole)
	}
	refused := tool("vault_read", map[string]any{"path": "Diary/Knead log", "allow_web": true})
	missing := tool("vault_read", map[string]any{"path": "Garden/Knead log", "allow_web": true})
	if strings.ReplaceAll(refused, "Diary", "Garden") != missing || !strings.Contains(missing, `"isError":true`) {
		t.Errorf("a refused personal note and a missing note differ:\n%s\n%s", refused, missing)
	}
	bread := tool("vault_read", map[string]any{"path": "Bread", "allow_web": true})
	leaks("vault_read Bread", bread)
	if !strings.Contains(bread, "A plain loaf") {
		t.Errorf("vault_read Bread under the open scope: %s", bread)
	}
	leaks("vault_neighbors", tool("vault_neighbors", map[string]any{"path": "99 topics/Baking", "allow_web": true}))
	topics := tool("vault_topics", map[string]any{"allow_web": true})
	leaks("vault_topics", topics)
	if !strings.Contains(topics, `"members":2`) {
		t.Errorf("vault_topics under the open scope: want Baking with its 2 open members: %s", topics)
	}
	read := func(uri string) string {
		return mcpCall(t, hs.URL, session, "resources/read", map[string]any{"uri": uri})
	}
	if got := read("vault://note/Diary/Knead%20log.md?allow_web=true"); strings.Contains(got, personalMark) || !strings.Contains(got, `"error"`) {
		t.Errorf("a personal note's resource under the open scope: %s", got)
	}
	if got := read("vault://note/Diary/Knead%20log.md"); !strings.Contains(got, personalMark) {
		t.Errorf("a personal note's resource with the whole vault: %s", got)
	}
}

// rpcResult calls method in a session and decodes the JSON-RPC result.
func rpcResult(t *testing.T, url, session, method string, params, result any) {
	t.Helper()
	body := mcpCall(t, url, session, method, params)
	if i := strings.Index(body, "{"); i > 0 { // an SSE frame: "event: message\ndata: {…}"
		body = body[i:]
	}
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  any             `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &out); err != nil || out.Error != nil {
		t.Fatalf("%s: %v %v\n%s", method, err, out.Error, body)
	}
	if err := json.Unmarshal(out.Result, result); err != nil {
		t.Fatalf("%s: %v\n%s", method, err, out.Result)
	}
}

// listTypes reports every "type" in a schema that is a list, by where it is.
func listTypes(where string, v any, found *[]string) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["type"].([]any); ok {
			*found = append(*found, fmt.Sprintf("%s: %v", where, v["type"]))
		}
		for k, sub := range v {
			listTypes(where+"."+k, sub, found)
		}
	case []any:
		for i, sub := range v {
			listTypes(fmt.Sprintf("%s[%d]", where, i), sub, found)
		}
	}
}

// Every tool's output schema declares single types (Gemini's function
// declarations and OpenAPI 3.0 take no ["null","array"]), and every list in
// a result is [] when empty, never null.
func TestMCPSchemasAreSingleTypedAndListsNeverNull(t *testing.T) {
	hs, _ := testServer(t, testVault(t), upstream(t), Options{})
	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	var tools struct {
		Tools []struct {
			Name         string         `json:"name"`
			OutputSchema map[string]any `json:"outputSchema"`
		} `json:"tools"`
	}
	rpcResult(t, hs.URL, session, "tools/list", map[string]any{}, &tools)
	if len(tools.Tools) != 4 {
		t.Fatalf("tools/list: %+v", tools)
	}
	for _, tool := range tools.Tools {
		var found []string
		listTypes(tool.Name, tool.OutputSchema, &found)
		for _, f := range found {
			t.Errorf("a type that is a list: %s", f)
		}
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"vault_search", map[string]any{"query": "xylophone quartz"}},
		{"vault_search", map[string]any{"query": "knead dough"}},
		{"vault_read", map[string]any{"path": "Recipes/Bread"}},
		{"vault_neighbors", map[string]any{"path": "Recipes/Bread"}},
		{"vault_topics", map[string]any{"allow_web": true}},
	} {
		var res struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		rpcResult(t, hs.URL, session, "tools/call", map[string]any{"name": c.name, "arguments": c.args}, &res)
		if len(res.StructuredContent) == 0 || strings.Contains(string(res.StructuredContent), "null") {
			t.Errorf("%s %v: structured content %s, want lists as []", c.name, c.args, res.StructuredContent)
		}
	}
}

// resources/list lists the topic notes, then the other notes by path, in
// pages with a cursor; on /mcp?allow_web=true only open notes, each with a
// URI that reads under the open scope, and the session's tools cannot widen
// it. Every listed note reads.
func TestMCPResourcesList(t *testing.T) {
	store := testVault(t)
	var many []vault.NoteInput
	for i := range resourcePage + 5 {
		many = append(many, note(fmt.Sprintf("Log/%03d.md", i), fmt.Sprintf("# Entry %d\n\nA line.\n", i)))
	}
	if _, err := store.Apply(context.Background(), index.Batch{Upserts: many}); err != nil {
		t.Fatal(err)
	}
	hs, _ := testServer(t, store, upstream(t), Options{})
	type page struct {
		Resources  []struct{ URI, Name, Title, MimeType string } `json:"resources"`
		NextCursor string                                        `json:"nextCursor"`
	}
	list := func(endpoint string) []string {
		t.Helper()
		session := initialize(t, hs.URL+endpoint).Header.Get("Mcp-Session-Id")
		var uris, names []string
		cursor := ""
		for pages := 0; ; pages++ {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			var p page
			rpcResult(t, hs.URL+endpoint, session, "resources/list", params, &p)
			for _, r := range p.Resources {
				uris, names = append(uris, r.URI), append(names, r.Name)
				if r.MimeType != "text/markdown" {
					t.Errorf("%s: %+v", endpoint, r)
				}
			}
			if cursor = p.NextCursor; cursor == "" {
				if pages == 0 {
					t.Errorf("%s: %d notes in one page, want pages of %d", endpoint, len(uris), resourcePage)
				}
				if len(names) < 2 || names[0] != "99 topics/Baking.md" || !slices.IsSorted(names[1:]) {
					t.Errorf("%s lists %v, want the topic note, then the others by path", endpoint, names)
				}
				return uris
			}
		}
	}
	all := list("")
	if len(all) != 7+resourcePage+5 || !slices.ContainsFunc(all, func(u string) bool { return strings.Contains(u, "Diary") }) {
		t.Fatalf("the whole vault lists %d notes: %v", len(all), all)
	}
	open := list("?allow_web=true")
	if len(open) != len(all)-3 {
		t.Errorf("open notes only lists %d notes, want %d", len(open), len(all)-3)
	}
	openURL := hs.URL + "?allow_web=true"
	openSession := initialize(t, openURL).Header.Get("Mcp-Session-Id")
	for _, uri := range open {
		if strings.Contains(uri, "Diary") || !strings.HasSuffix(uri, "?allow_web=true") {
			t.Errorf("open notes only lists %s", uri)
		}
	}
	wholeSession := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	for _, uri := range []string{open[0], open[len(open)-1], all[1]} {
		var read struct {
			Contents []struct{ Text string } `json:"contents"`
		}
		rpcResult(t, hs.URL, wholeSession, "resources/read", map[string]any{"uri": uri}, &read)
		if len(read.Contents) != 1 || read.Contents[0].Text == "" {
			t.Errorf("resources/read %s: %+v", uri, read)
		}
	}
	if body := mcpCall(t, openURL, openSession, "tools/call", map[string]any{"name": "vault_read", "arguments": map[string]any{"path": "Diary/Bread", "allow_web": false}}); !strings.Contains(body, `"isError":true`) {
		t.Errorf("a tool of an open-only session read a personal note: %s", body)
	}
	if resp := initialize(t, hs.URL+"?allow_web=maybe"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("/mcp?allow_web=maybe: %d, want 400", resp.StatusCode)
	}
}

// A resources/list paged while notes are edited, added and deleted lists
// every note that was there throughout exactly once, and no note twice.
// Before, pages were offsets into the notes most recently changed first:
// each edit between two pages pushed an unlisted note ahead of the cursor
// (never listed) and a listed one behind it (listed again).
func TestMCPResourcesListWhileNotesChange(t *testing.T) {
	store := testVault(t)
	ctx := context.Background()
	logNote := func(i, rev int) vault.NoteInput {
		n := note(fmt.Sprintf("Log/%03d.md", i), fmt.Sprintf("# Entry %d\n\nRevision %d.\n", i, rev))
		n.Rev = fmt.Sprintf("%d-r", rev)
		return n
	}
	apply := func(b index.Batch) {
		t.Helper()
		time.Sleep(2 * time.Millisecond) // each write its own indexing time
		if _, err := store.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var notes []vault.NoteInput
	for i := range 3 * resourcePage {
		notes = append(notes, logNote(i, 1))
	}
	apply(index.Batch{Upserts: notes})
	existing := map[string]bool{}
	all, _, err := store.NoteList(ctx, vault.NoteQuery{State: vault.StatusIndexed, Scope: vault.ScopeAll, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range all {
		existing[n.Path] = true
	}
	hs, _ := testServer(t, store, upstream(t), Options{})
	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	seen := map[string]int{}
	cursor := ""
	for pages := 0; ; pages++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var p struct {
			Resources  []struct{ Name string } `json:"resources"`
			NextCursor string                  `json:"nextCursor"`
		}
		rpcResult(t, hs.URL, session, "resources/list", params, &p)
		for _, r := range p.Resources {
			seen[r.Name]++
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
		// Between pages: five notes edited on either side of the cursor, one
		// added on either side, one deleted on either side.
		var edits []vault.NoteInput
		for _, i := range []int{0, 10, 60, 100, 140} {
			edits = append(edits, logNote(i, pages+2))
		}
		edits = append(edits, note(fmt.Sprintf("Log/%03d-new.md", pages), "# New\n\nAdded.\n"), note(fmt.Sprintf("Added/%d.md", pages), "# New\n\nAdded.\n"))
		apply(index.Batch{Upserts: edits, Deletes: []string{fmt.Sprintf("Log/%03d.md", 20+pages), fmt.Sprintf("Log/%03d.md", 120+pages)}})
		for _, d := range []int{20 + pages, 120 + pages} {
			delete(existing, fmt.Sprintf("Log/%03d.md", d))
		}
	}
	for path := range existing {
		if seen[path] != 1 {
			t.Errorf("%s, there all along, listed %d times", path, seen[path])
		}
	}
	for path, n := range seen {
		if n > 1 {
			t.Errorf("%s listed %d times", path, n)
		}
	}
}
