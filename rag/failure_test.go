package rag

import (
	"context"
	"strings"
	"testing"
)

// A configured model that fails gets an answer saying that it failed, and
// why, in words that name no endpoint; never that no model is configured.
func TestModelFailureSaysWhy(t *testing.T) {
	t.Parallel()
	store := helpVault(t)
	closed := newFakeModel(t, nil)
	closed.srv.Close()
	for name, tc := range map[string]struct {
		model *fakeModel
		why   string
	}{
		"server error": {func() *fakeModel { m := newFakeModel(t, nil); m.status = 500; return m }(), "it answered 500 Internal Server Error"},
		"wrong key":    {func() *fakeModel { m := newFakeModel(t, nil); m.status = 401; return m }(), "it answered 401 Unauthorized"},
		"rate limit":   {func() *fakeModel { m := newFakeModel(t, nil); m.status = 429; return m }(), "it answered 429 Too Many Requests"},
		"unreachable":  {closed, "it could not be reached"},
	} {
		t.Run(name, func(t *testing.T) {
			p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Generator: tc.model.client(t)})
			a, err := p.Ask(context.Background(), Question{Text: "How do I recover a deleted note?", AllowWeb: true}, func(string) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			said := "The generation model failed (" + tc.why + "), so these are retrieved passages."
			if !a.Extractive || !strings.Contains(a.Text, said) || strings.Count(a.Text, "generation model") != 1 {
				t.Fatalf("the answer does not say once that the model failed, and why (%q):\n%s", said, a.Text)
			}
			if strings.Contains(a.Text, "127.0.0.1") || !strings.Contains(a.Text, "[[en/Plugins/File recovery|File recovery]]") {
				t.Fatalf("answer:\n%s", a.Text)
			}
			if len(a.Notes) != 1 || a.Notes[0] != said {
				t.Fatalf("notes = %q, want %q", a.Notes, said)
			}
		})
	}
}
