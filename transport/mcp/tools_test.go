package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/tstest/smallvault"
	"github.com/vaultask/vaultask/vault"
)

// Every tool and the note resource, called with allow_web=true, see open
// notes only: the personal notes outnumber what a search returns, a
// personal note refused by path reads exactly like a missing one, a name
// both sides share resolves to the open note without a "did you mean", the
// topic's member count leaves the personal clipping out, and every
// resource link handed out under the open scope reads under it again.
func TestMCPAllowWebSeesOpenNotesOnly(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), Options{})
	resp := initialize(t, hs.URL)
	session := resp.Header.Get("Mcp-Session-Id")
	tool := func(name string, args map[string]any) string {
		return mcpCall(t, hs.URL, session, "tools/call", map[string]any{"name": name, "arguments": args})
	}
	leaks := func(what, body string) {
		t.Helper()
		// The open topic note's own text links to [[Diary/Bread]]: that text is
		// open; a personal note as a result, a neighbour or a link is not.
		if strings.Contains(body, smallvault.PersonalMark) || strings.Contains(body, `"path":"Diary`) || strings.Contains(body, "note/Diary") {
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
	if got := read("vault://note/Diary/Knead%20log.md?allow_web=true"); strings.Contains(got, smallvault.PersonalMark) || !strings.Contains(got, `"error"`) {
		t.Errorf("a personal note's resource under the open scope: %s", got)
	}
	if got := read("vault://note/Diary/Knead%20log.md"); !strings.Contains(got, smallvault.PersonalMark) {
		t.Errorf("a personal note's resource with the whole vault: %s", got)
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
	hs, _ := testServer(t, smallvault.Open(t), Options{})
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

// One of a thing is counted in the singular: a topic note collecting one
// note, in resources/list and in vault_topics, which finds one topic note.
func TestMCPCountsOneInTheSingular(t *testing.T) {
	ctx := context.Background()
	store, err := index.Open(ctx, index.Options{Path: filepath.Join(t.TempDir(), "index.db"), Space: vault.EmbeddingSpace{Model: "test/none", Dim: 4}, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Feed().Apply(ctx, index.Batch{Upserts: []vault.NoteInput{
		smallvault.Note("Recipes/Starter.md", "# Starter\n\nFeed the starter daily with flour and water.\n"),
		smallvault.Note("99 topics/Starters.md", "# Starters\n\n<!-- begin:clippings -->\n[[Starter]]\n<!-- end:clippings -->\n"),
	}}); err != nil {
		t.Fatal(err)
	}
	hs, _ := testServer(t, store, Options{})
	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	var list struct {
		Resources []struct{ Name, Description string } `json:"resources"`
	}
	rpcResult(t, hs.URL, session, "resources/list", map[string]any{}, &list)
	if len(list.Resources) == 0 || list.Resources[0].Name != "99 topics/Starters.md" || list.Resources[0].Description != "topic note collecting 1 note" {
		t.Errorf("resources/list: %+v, want the topic note collecting 1 note first", list.Resources)
	}
	topics := mcpCall(t, hs.URL, session, "tools/call", map[string]any{"name": "vault_topics", "arguments": map[string]any{}})
	for _, want := range []string{`1 topic note:\n`, `|Starters]]: 1 note\n`} {
		if !strings.Contains(topics, want) {
			t.Errorf("vault_topics lacks %q: %s", want, topics)
		}
	}
}

// An MCP search over the question limit is a tool error naming the limit.
func TestMCPSearchOverLimit(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), Options{})
	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	got := mcpCall(t, hs.URL, session, "tools/call", map[string]any{"name": "vault_search",
		"arguments": map[string]any{"query": strings.Repeat("knead ", rag.DefaultQuestionBytes/6+1)}})
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, fmt.Sprintf("over the limit of %d bytes (api.max_question_bytes)", rag.DefaultQuestionBytes)) {
		t.Errorf("an over-limit search: %s", got)
	}
}

// vault_neighbors with allow_web=true lists a topic note's open members,
// and none of the twelve personal notes it also collects: not an empty
// answer, which shows no personal note either.
func TestMCPNeighborsMorePersonalThanOpen(t *testing.T) {
	store, _ := smallvault.WithDiary(t, resourcePage+10)
	hs, _ := testServer(t, store, Options{})
	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	neighbours := func(path string, allowWeb bool) []string {
		t.Helper()
		var res struct {
			StructuredContent struct {
				Neighbors []struct{ Path, Relation string } `json:"neighbors"`
			} `json:"structuredContent"`
			IsError bool `json:"isError"`
		}
		rpcResult(t, hs.URL, session, "tools/call", map[string]any{"name": "vault_neighbors",
			"arguments": map[string]any{"path": path, "allow_web": allowWeb}}, &res)
		if res.IsError {
			t.Fatalf("vault_neighbors %s: an error", path)
		}
		var out []string
		for _, n := range res.StructuredContent.Neighbors {
			out = append(out, n.Relation+" "+n.Path)
		}
		slices.Sort(out)
		return out
	}
	if all := neighbours("99 topics/Journal", false); len(all) != 13 {
		t.Fatalf("the whole vault: Journal's neighbours %v, want its 13 members (the premise)", all)
	}
	if got, want := neighbours("99 topics/Journal", true), []string{"member Recipes/Starter.md"}; !slices.Equal(got, want) {
		t.Errorf("allow_web=true: Journal's neighbours %v, want %v", got, want)
	}
	if got, want := neighbours("99 topics/Baking", true), []string{"member Recipes/Sourdough bread.md", "member Recipes/Starter.md"}; !slices.Equal(got, want) {
		t.Errorf("allow_web=true: Baking's neighbours %v, want %v", got, want)
	}
}
