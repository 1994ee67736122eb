package rag

import (
	"context"
	"strings"
	"testing"
)

// A question's MaxTokens bounds its answer only: the rewrite and the rerank
// that the pipeline asks of the same model on its own account carry none.
func TestMaxTokensBoundsTheAnswerOnly(t *testing.T) {
	t.Parallel()
	store := quasarVault(t)
	model := newFakeModel(t, func(msgs []Message) []string {
		switch msgs[0].Content {
		case rewriteSystem:
			return []string{"quasar light"}
		case rerankSystem:
			n := strings.Count(msgs[1].Content, "\n[")
			return []string{"[" + strings.TrimSuffix(strings.Repeat("5,", n), ",") + "]"}
		}
		return []string{"Quasars are bright."}
	})
	gen := model.client(t)
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Generator: gen, Reranker: NewChatReranker(gen, RerankOptions{})})
	history := []Turn{{Role: "user", Text: "tell me about quasars"}, {Role: "assistant", Text: "They are far away."}}
	a, err := p.Ask(context.Background(), Question{Text: "and their light?", History: history, MaxTokens: 42}, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if a.Retrieval.Rerank == nil || a.Retrieval.Rerank.Requests == 0 || a.Extractive {
		t.Fatalf("want a rerank and a generated answer; rerank %+v, extractive %v", a.Retrieval.Rerank, a.Extractive)
	}
	reqs, maxTokens := model.recorded(), model.recordedMaxTokens()
	if len(reqs) < 3 {
		t.Fatalf("%d model requests, want a rewrite, a rerank and an answer", len(reqs))
	}
	for i, msgs := range reqs {
		want := 0
		if msgs[0].Content == systemPrompt {
			want = 42
		}
		if maxTokens[i] != want {
			t.Errorf("request %d (%.30q): max_tokens %d, want %d", i, msgs[0].Content, maxTokens[i], want)
		}
	}
}
