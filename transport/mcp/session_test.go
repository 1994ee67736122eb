package mcp

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/tstest/smallvault"
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

// readPersonal reads a personal note with vault_read, not asking for
// allow_web, on url in a session, and reports whether the personal text
// came back.
func readPersonal(t *testing.T, url, session string) bool {
	t.Helper()
	body := mcpCall(t, url, session, "tools/call", map[string]any{"name": "vault_read", "arguments": map[string]any{"path": "Diary/Bread"}})
	return strings.Contains(body, smallvault.PersonalMark)
}

// A session's scope is the one it was opened with, for its whole life: a
// session opened on /mcp?allow_web=true sees open notes only whatever URL
// later requests use, a forged or foreign id sees open notes only, and
// both kinds keep their scope after the server drops what it held of them
// and after a restart with the same key. Before, the scope was each
// request's URL's: the open session read a personal note on /mcp.
func TestMCPSessionScopeOutlivesItsURLEvictionAndRestart(t *testing.T) {
	store := smallvault.Open(t)
	opts := Options{SessionKey: testSessionKey, MaxSessions: 2}
	hs, s := testServer(t, store, opts)
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
	restarted, _ := testServer(t, store, opts)
	check("after a restart", restarted.URL)
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	rpcResult(t, restarted.URL, whole, "tools/list", map[string]any{}, &tools)
	if len(tools.Tools) != 4 {
		t.Errorf("tools/list after a restart: %+v", tools)
	}

	rekeyed, _ := testServer(t, store, Options{SessionKey: bytes.Repeat([]byte{9}, SessionKeyLen)})
	if readPersonal(t, rekeyed.URL, whole) {
		t.Error("a server with another key took the whole vault's session id as its own")
	}
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
