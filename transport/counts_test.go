package transport

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// One of a thing is counted in the singular: a topic note collecting one
// note, in resources/list and in vault_topics, which finds one topic note.
func TestMCPCountsOneInTheSingular(t *testing.T) {
	ctx := context.Background()
	store, err := index.Open(ctx, index.Options{Path: filepath.Join(t.TempDir(), "index.db"), Space: vault.EmbeddingSpace{Model: "test/none", Dim: 4}, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Apply(ctx, index.Batch{Upserts: []vault.NoteInput{
		note("Recipes/Starter.md", "# Starter\n\nFeed the starter daily with flour and water.\n"),
		note("99 topics/Starters.md", "# Starters\n\n<!-- begin:clippings -->\n[[Starter]]\n<!-- end:clippings -->\n"),
	}}); err != nil {
		t.Fatal(err)
	}
	hs, _ := testServer(t, store, upstream(t), Options{})
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
