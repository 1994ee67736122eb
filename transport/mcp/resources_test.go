package mcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/tstest/smallvault"
	"github.com/vaultask/vaultask/vault"
)

// resources/list lists the topic notes, then the other notes by path, in
// pages with a cursor; on /mcp?allow_web=true only open notes, each with a
// URI that reads under the open scope, and the session's tools cannot widen
// it. Every listed note reads.
func TestMCPResourcesList(t *testing.T) {
	store := smallvault.Open(t)
	var many []vault.NoteInput
	for i := range resourcePage + 5 {
		many = append(many, smallvault.Note(fmt.Sprintf("Log/%03d.md", i), fmt.Sprintf("# Entry %d\n\nA line.\n", i)))
	}
	if _, err := store.Feed().Apply(context.Background(), index.Batch{Upserts: many}); err != nil {
		t.Fatal(err)
	}
	hs, _ := testServer(t, store, Options{})
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
	store := smallvault.Open(t)
	ctx := context.Background()
	logNote := func(i, rev int) vault.NoteInput {
		n := smallvault.Note(fmt.Sprintf("Log/%03d.md", i), fmt.Sprintf("# Entry %d\n\nRevision %d.\n", i, rev))
		n.Rev = fmt.Sprintf("%d-r", rev)
		return n
	}
	apply := func(b index.Batch) {
		t.Helper()
		time.Sleep(2 * time.Millisecond) // each write its own indexing time
		if _, err := store.Feed().Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var notes []vault.NoteInput
	for i := range 3 * resourcePage {
		notes = append(notes, logNote(i, 1))
	}
	apply(index.Batch{Upserts: notes})
	existing := map[string]bool{}
	all, _, err := store.Browse().NoteList(ctx, vault.NoteQuery{State: vault.StatusIndexed, Scope: vault.ScopeAll, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range all {
		existing[n.Path] = true
	}
	hs, _ := testServer(t, store, Options{})
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
		edits = append(edits, smallvault.Note(fmt.Sprintf("Log/%03d-new.md", pages), "# New\n\nAdded.\n"), smallvault.Note(fmt.Sprintf("Added/%d.md", pages), "# New\n\nAdded.\n"))
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

// resources/read of a note that is not there, or not for this caller, is
// the resources spec's "resource not found" (-32002) naming the URI, the
// same for both; an allow_web that cannot be read is invalid params
// (-32602). Protocol version 2026-07-28 reports a missing resource as
// invalid params. Before, all of them were -32603, an internal error.
func TestMCPResourceReadErrors(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), Options{})
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
	if pcode != code || strings.ReplaceAll(pmsg, "Diary", "Garden") != msg || pdata["uri"] != personal || strings.Contains(pmsg, smallvault.PersonalMark) {
		t.Errorf("a personal note under the open scope: %d %q %v; a missing one: %d %q", pcode, pmsg, pdata, code, msg)
	}
	if code, msg, _ := read("vault://note/Recipes/Bread.md?allow_web=TRUE"); code != -32602 || !strings.Contains(msg, "allow_web") {
		t.Errorf("a bad allow_web: %d %q, want -32602 naming allow_web", code, msg)
	}
	const modern = "2026-07-28"
	resp := rpc(t, hs.URL, "", "resources/read", map[string]any{"uri": missing, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion": modern, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}},
		"MCP-Protocol-Version", modern, "Mcp-Method", "resources/read", "Mcp-Name", missing)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"code":-32602`) || !strings.Contains(string(body), "Garden/Knead log.md") {
		t.Errorf("a missing note in protocol version %s: %s, want -32602", modern, body)
	}
}

// resources/list on /mcp?allow_web=true with more personal notes than a
// page before the open ones lists every open note, in full pages, and no
// personal one.
func TestMCPResourcesListMorePersonalThanAPage(t *testing.T) {
	store, open := smallvault.WithDiary(t, resourcePage+10)
	hs, _ := testServer(t, store, Options{})
	list := func(endpoint string) (names []string, pages int) {
		t.Helper()
		session := initialize(t, hs.URL+endpoint).Header.Get("Mcp-Session-Id")
		cursor := ""
		for {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			var p struct {
				Resources  []struct{ Name string } `json:"resources"`
				NextCursor string                  `json:"nextCursor"`
			}
			rpcResult(t, hs.URL+endpoint, session, "resources/list", params, &p)
			pages++
			for _, r := range p.Resources {
				names = append(names, r.Name)
			}
			if cursor = p.NextCursor; cursor == "" || pages > 10 {
				return names, pages
			}
		}
	}
	if all, pages := list(""); pages < 2 || !slices.ContainsFunc(all[:resourcePage], func(n string) bool { return strings.HasPrefix(n, "Diary/") }) {
		t.Fatalf("the whole vault in %d pages, the first %v: want personal notes in the first page (the premise)", pages, all[:min(len(all), 5)])
	}
	got, pages := list("?allow_web=true")
	slices.Sort(got)
	if !slices.Equal(got, open) || pages != 1 {
		t.Errorf("allow_web=true lists %v in %d pages, want %v in one", got, pages, open)
	}
}

// FuzzDecodeCursor feeds resources/list any cursor: it never panics, takes
// only a path that is not empty, and every path it hands out reads back.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{"", string(encodeCursor("Recipes/Bread.md")), string(encodeCursor("99 topics/é.md")), "bm90ZXM6NTA=", "YWZ0ZXI6", "after:x", "%%%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		path, ok := decodeCursor(mcp.Cursor(c))
		if !ok {
			return
		}
		if path == "" {
			t.Fatalf("cursor %q gave an empty path", c)
		}
		if back, ok := decodeCursor(encodeCursor(path)); !ok || back != path {
			t.Fatalf("path %q from %q does not read back: %q, %v", path, c, back, ok)
		}
	})
}
