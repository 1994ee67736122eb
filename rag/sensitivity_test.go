package rag

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// personalMark is in every personal note's text, so a leak is a substring.
const personalMark = "PERSONALMARK"

// quasarVault has four open notes about quasars and three open siblings
// under an open topic note, and twelve personal notes that match "quasar"
// better than any open one, by vector and by BM25, and are clipped by the
// same topic note: more personal candidates than every k (vector, full
// text, fusion, graph siblings, final).
func quasarVault(tb testing.TB) *index.Store {
	tb.Helper()
	notes := []vault.NoteInput{
		note("Space/Quasar basics.md", "# Quasar basics\n\nA quasar is a bright galactic core powered by a black hole.\n"),
		note("Space/Quasar jets.md", "# Quasar jets\n\nJets of a quasar reach far beyond its galaxy.\n"),
		note("Space/Quasar redshift.md", "# Quasar redshift\n\nEvery quasar is far away, its light shifted red.\n"),
		note("Space/Quasar light.md", "# Quasar light\n\nA quasar outshines the galaxy around it.\n"),
		note("Space/Pulsar.md", "# Pulsar\n\nA spinning neutron star.\n"),
		note("Space/Nebula.md", "# Nebula\n\nA cloud of gas and dust.\n"),
		note("Space/Comet.md", "# Comet\n\nIce and rock.\n"),
	}
	clips := []string{"Quasar basics", "Quasar jets", "Quasar redshift", "Quasar light", "Pulsar", "Nebula", "Comet"}
	for i := range 12 {
		name := fmt.Sprintf("Quasar dream %02d", i)
		notes = append(notes, note("Diary/"+name+".md", fmt.Sprintf("quasar quasar quasar quasar quasar %s dream %02d\n", personalMark, i)))
		clips = append(clips, name)
	}
	topic := "# Astronomy\n\n<!-- begin:clippings -->\n"
	for _, c := range clips {
		topic += "- [[" + c + "]]\n"
	}
	notes = append(notes, note("99 topics/Astronomy.md", topic+"<!-- end:clippings -->\n"))
	return mustIndex(tb, []string{"Diary/**"}, notes...)
}

func assertOpen(t *testing.T, what string, hits []Hit) {
	t.Helper()
	for _, h := range hits {
		if h.Chunk.Sensitivity != vault.SensitivityOpen || strings.Contains(h.Chunk.Body, personalMark) {
			t.Errorf("%s holds personal %s", what, h.Chunk.Path)
		}
	}
}

// With allow_web every stage sees open notes only and no personal
// candidate takes a slot: each k is filled with open hits.
func TestOpenScopeFillsEveryKWithOpenHits(t *testing.T) {
	t.Parallel()
	store := quasarVault(t)
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}})
	s := p.Settings()

	r := mustRetrieve(t, p, Question{Text: "quasar", AllowWeb: true})
	assertOpen(t, "direct hits", r.Direct)
	if len(r.Direct) != s.FusionTopK {
		t.Errorf("%d direct hits, want fusion_top_k = %d", len(r.Direct), s.FusionTopK)
	}
	for stage, want := range map[string]int{"vector": s.VectorTopK, "fts": s.FTSTopK} {
		hits := stageHits(r, stage)
		if len(hits) != want {
			t.Errorf("%s stage has %d hits, want %d", stage, len(hits), want)
		}
		for _, h := range hits {
			if h.Sensitivity != vault.SensitivityOpen {
				t.Errorf("%s stage holds personal %s", stage, h.Path)
			}
		}
	}
	// The topic note clips more personal notes than graph_max_siblings:
	// what expansion reaches through it (as siblings, or as members when
	// the topic note is a hit itself) is open all the same.
	clipped := 0
	for _, h := range stageHits(r, "expand") {
		if strings.HasPrefix(h.Reach, "sibling") || strings.HasPrefix(h.Reach, "member") {
			clipped++
		}
	}
	if clipped < s.GraphMaxSiblings {
		t.Errorf("%d notes expanded through the topic note, want at least graph_max_siblings = %d", clipped, s.GraphMaxSiblings)
	}
	assertOpen(t, "final hits", r.Hits)
	if len(r.Hits) != s.FinalTopK {
		t.Errorf("%d final hits, want final_top_k = %d", len(r.Hits), s.FinalTopK)
	}
	if n := countGraph(r.Hits); n != s.GraphMaxSlots {
		t.Errorf("%d expanded hits in the answer, want graph_max_slots = %d", n, s.GraphMaxSlots)
	}
	assertOpen(t, "context", r.Context)
	if ctx := renderContext(r.Context); strings.Contains(ctx, personalMark) || strings.Contains(ctx, "Diary/") {
		t.Errorf("assembled context shows a personal note:\n%s", ctx)
	}
	trace, _ := json.Marshal(r.Trace)
	if strings.Contains(string(trace), "Diary/") {
		t.Errorf("trace names a personal note: %s", trace)
	}

	// The same question without the web sees the personal notes, which
	// outrank every open one: the vault above really is a test of scope.
	all := mustRetrieve(t, p, Question{Text: "quasar"})
	personal := 0
	for _, h := range all.Hits {
		if h.Chunk.Sensitivity == vault.SensitivityPersonal {
			personal++
		}
	}
	if personal < s.FusionTopK {
		t.Fatalf("vault-only retrieval has %d personal hits, want the top %d", personal, s.FusionTopK)
	}
}

// The generation model's prompt, the rewrite prompt and the web query of an
// allow_web request carry no personal text, though the conversation's
// earlier answer quoted a personal note.
func TestOpenScopeReachesNoModelOrWebQuery(t *testing.T) {
	t.Parallel()
	store := quasarVault(t)
	model := newFakeModel(t, func(msgs []Message) []string {
		if msgs[0].Content == rewriteSystem {
			return []string{"quasar light"}
		}
		return []string{"Quasars are bright ", "[[Space/Quasar light|Quasar light]]."}
	})
	web := &fakeWeb{search: func(string, int) ([]WebResult, error) { return nil, nil }}
	settings := testSettings()
	settings.Coverage = map[string]CoverageModel{testSpace.Model: alwaysThin} // the web is always sought
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Generator: model.client(t), Web: web, Settings: settings})
	history := []Turn{
		{Role: "user", Text: "what did I dream about?"},
		{Role: "assistant", Text: "You dreamt of a quasar: " + personalMark + " [[Diary/Quasar dream 03]]"},
	}
	a, err := p.Ask(context.Background(), Question{Text: "and what is it really?", History: history, AllowWeb: true}, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	reqs := model.recorded()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want a rewrite and an answer", len(reqs))
	}
	for _, req := range reqs {
		for _, m := range req {
			if strings.Contains(m.Content, personalMark) || strings.Contains(m.Content, "Diary/") {
				t.Errorf("a %s message to the model holds personal text:\n%s", m.Role, m.Content)
			}
		}
	}
	if !strings.Contains(reqs[0][1].Content, "what did I dream about?") {
		t.Errorf("the rewrite prompt lacks the user's own turn:\n%s", reqs[0][1].Content)
	}
	if len(web.queries) != 1 || web.queries[0] != "quasar light" || a.Retrieval.Query != "quasar light" {
		t.Fatalf("web queries %q, want only the rewrite %q", web.queries, "quasar light")
	}

	// Vault only: the earlier answer may be shown, and the web is never asked.
	web.queries = nil
	if _, err := p.Ask(context.Background(), Question{Text: "and what is it really?", History: history}, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if rewrite := model.recorded()[2]; !strings.Contains(rewrite[1].Content, personalMark) {
		t.Errorf("a vault-only rewrite should see the earlier answer:\n%s", rewrite[1].Content)
	}
	if len(web.queries) != 0 {
		t.Fatalf("allow_web=false searched the web for %q", web.queries)
	}
}

// Without a model the rewrite concatenates the user's turns only.
func TestConcatenatedRewriteUsesUserTurnsOnly(t *testing.T) {
	t.Parallel()
	q := Question{Text: "and its jets?", AllowWeb: true, History: []Turn{
		{Role: "user", Text: "hello"}, {Role: "assistant", Text: personalMark},
		{Role: "user", Text: "what is a quasar"}, {Role: "assistant", Text: personalMark},
		{Role: "user", Text: "how bright is it"},
	}}
	if got, want := concatTurns(q, DefaultQuestionBytes), "what is a quasar how bright is it and its jets?"; got != want {
		t.Fatalf("concatTurns = %q, want %q", got, want)
	}
	store := quasarVault(t)
	web := &fakeWeb{search: func(string, int) ([]WebResult, error) { return nil, nil }}
	settings := testSettings()
	settings.Coverage = map[string]CoverageModel{testSpace.Model: alwaysThin}
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Web: web, Settings: settings})
	if _, err := p.Ask(context.Background(), q, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if len(web.queries) != 1 || web.queries[0] != "what is a quasar how bright is it and its jets?" {
		t.Fatalf("web queries = %q", web.queries)
	}
}

// What a personal note says when it links to an open note is never
// searchable in the open note, at any field weight, and what an open note
// says is: the retrieval with allow_web finds the open note by the open
// linking note's words only, and nothing at all by the personal one's.
func TestPersonalLinkTextNeverFindsAnOpenNote(t *testing.T) {
	t.Parallel()
	store := mustIndex(t, []string{"Diary/**"},
		note("Diary/Monday.md", "Saw [[Clinic]] about my "+personalMark+" zygomatic pain.\n"),
		note("Guides/Index.md", "- [[Clinic]]: the walk-in fluoroscopy service\n"),
		note("Places/Clinic.md", "# Clinic\n\nOpening hours.\n"),
	)
	for _, w := range []vault.FieldWeights{{}, {Links: 1}, {Title: 1, Body: 1, Links: 100}} {
		s := testSettings()
		s.FTSFields = w
		p := mustPipeline(t, Options{Searcher: store.Search(), Settings: s})
		r := mustRetrieve(t, p, Question{Text: "zygomatic", AllowWeb: true})
		if len(r.Hits) != 0 {
			t.Errorf("weights %+v: open retrieval by a personal note's link words = %v", w, hitPaths(r.Hits))
		}
		r = mustRetrieve(t, p, Question{Text: "fluoroscopy", AllowWeb: true})
		assertOpen(t, "open retrieval by open link words", r.Hits)
		if !slices.Contains(hitPaths(r.Hits), "Places/Clinic.md") {
			t.Errorf("weights %+v: open link words found %v, want the clinic", w, hitPaths(r.Hits))
		}
	}
}
