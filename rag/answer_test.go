package rag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

var wikilink = regexp.MustCompile(`\[\[([^\]\n]*)\]\]`)

// The answer streams while its citations are checked: a verified link
// passes, a hallucinated one, one outside the context and one to a personal
// note the request may not see are all unlinked and recorded; every
// wikilink left in the answer names a note of its context.
func TestCitationsCheckedWhileStreaming(t *testing.T) {
	t.Parallel()
	store := quasarVault(t)
	pieces := []string{
		"Quasars are bright [[Space/Quasar",
		" light|Quasar light]] and far away [[Space/Quasar redshift]]. ",
		"Black holes power them [[Space/Black holes|Black holes]]; see also ![[Space/Nebula]] ",
		"and [[Diary/Quasar dream 03]]. Jets: [[Quasar jets]]",
	}
	model := newFakeModel(t, func([]Message) []string { return pieces })
	model.afterFirst = make(chan struct{})
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Generator: model.client(t)})

	var deltas []string
	var once sync.Once
	a, err := p.Ask(context.Background(), Question{Text: "quasar", AllowWeb: true}, func(s string) error {
		deltas = append(deltas, s)
		once.Do(func() { close(model.afterFirst) }) // the server sends the rest only now
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The model sends the rest only after the first delta reached us (or
	// gives up after 5 s): a buffered answer ends at its first piece.
	if len(deltas) < 3 {
		t.Fatalf("the answer did not stream: %d deltas", len(deltas))
	}
	if deltas[0] != "Quasars are bright " {
		t.Errorf("first delta = %q: text before a link should pass at once", deltas[0])
	}
	want := "Quasars are bright [[Space/Quasar light|Quasar light]] and far away [[Space/Quasar redshift]]. " +
		"Black holes power them Black holes (unverified citation); see also Nebula (unverified citation) " +
		"and Quasar dream 03 (unverified citation). Jets: [[Quasar jets]]"
	if a.Text != want || strings.Join(deltas, "") != want {
		t.Fatalf("answer:\n%s\nwant:\n%s", a.Text, want)
	}
	wantCites := []Citation{
		{Link: "Space/Quasar light|Quasar light", Path: "Space/Quasar light.md", Verified: true},
		{Link: "Space/Quasar redshift", Path: "Space/Quasar redshift.md", Verified: true},
		{Link: "Space/Black holes|Black holes", Reason: ReasonNoSuchNote},
		{Link: "Space/Nebula", Path: "Space/Nebula.md", Reason: ReasonNotInContext},
		{Link: "Diary/Quasar dream 03", Reason: ReasonNoSuchNote}, // personal: invisible, not "not in context"
		{Link: "Quasar jets", Path: "Space/Quasar jets.md", Verified: true},
	}
	if diff := cmp.Diff(wantCites, a.Citations); diff != "" {
		t.Fatalf("citations (-want +got):\n%s", diff)
	}
	assertCitationsResolveInContext(t, store, a)
	var changes []string
	for _, s := range a.Retrieval.Trace.Stages {
		if s.Name == "citations" {
			changes = s.Changes
		}
	}
	if len(changes) != 3 || !strings.Contains(changes[0], "[[Space/Black holes|Black holes]]: no such note") {
		t.Fatalf("trace citation changes = %q", changes)
	}
}

// assertCitationsResolveInContext checks every wikilink left in an answer:
// it resolves to a doc in docs and that doc was in the context.
func assertCitationsResolveInContext(t *testing.T, store *index.Store, a *Answer) {
	t.Helper()
	var links []string
	for _, m := range wikilink.FindAllStringSubmatch(a.Text, -1) {
		links = append(links, m[1])
	}
	docs, err := store.Search().ResolveLinks(context.Background(), links, a.Retrieval.Scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		d, ok := docs[l]
		if !ok {
			t.Errorf("[[%s]] resolves to no note", l)
			continue
		}
		if !slices.ContainsFunc(a.Retrieval.Context, func(h Hit) bool { return h.Chunk.DocID == d.DocID }) {
			t.Errorf("[[%s]] names %s, which was not in the context", l, d.Path)
		}
	}
}

// Split anywhere, the stream filters to the same text.
func TestCitationFilterIsSplitInvariant(t *testing.T) {
	t.Parallel()
	text := "a [[ok one]] b ![[bad|Shown]] [[ok|x]]! [[never closes\n[[ok]]][[bad]] [x] " +
		"code `[[bad]]` and ``a`[[bad]]`` fenced\n```md\n[[bad]] ``\n```\nafter [[bad#Part]] end [["
	check := func(link string) Citation { return Citation{Link: link, Verified: strings.HasPrefix(link, "ok")} }
	run := func(pieces ...string) string {
		var out strings.Builder
		f := &citationFilter{check: check, emit: func(s string) error { out.WriteString(s); return nil }}
		for _, p := range pieces {
			if err := f.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := "a [[ok one]] b Shown (unverified citation) [[ok|x]]! [[never closes\n[[ok]]]bad (unverified citation) [x] " +
		"code `[[bad]]` and ``a`[[bad]]`` fenced\n```md\n[[bad]] ``\n```\nafter bad › Part (unverified citation) end [["
	if got := run(text); got != want {
		t.Fatalf("whole:\n%q\nwant\n%q", got, want)
	}
	for i := range len(text) + 1 {
		if got := run(text[:i], text[i:]); got != want {
			t.Fatalf("split at %d:\n%q\nwant\n%q", i, got, want)
		}
	}
	var bytes []string
	for i := range len(text) {
		bytes = append(bytes, text[i:i+1])
	}
	if got := run(bytes...); got != want {
		t.Fatalf("byte by byte:\n%q", got)
	}
	long := "[[" + strings.Repeat("x", maxLinkBytes+10)
	if got := run(long[:maxLinkBytes+5], long[maxLinkBytes+5:]); got != long {
		t.Fatalf("an overlong opener is not a link and passes as is: %q", got)
	}
}

func helpVault(tb testing.TB) *index.Store {
	tb.Helper()
	return mustIndex(tb, []string{"Private/**"},
		note("en/Plugins/File recovery.md", "# File recovery\n\nFile recovery keeps snapshots of your notes so you can recover a deleted or changed note. See [[Manage notes|managing notes]] ![[snapshot.png]].\n\n## Restore a snapshot\n\nOpen the File recovery settings and pick a snapshot to restore.\n"),
		note("en/Files and folders/Manage notes.md", "# Manage notes\n\nDeleted notes go to the system trash or the .trash folder.\n"),
		note("en/Plugins/Backlinks.md", "# Backlinks\n\nSee which notes link to the active note. Related: [[File recovery]].\n"),
		note("Private/Passwords.md", "my recover deleted note password is hunter2\n"),
	)
}

func TestExtractiveAnswerWithoutModel(t *testing.T) {
	t.Parallel()
	store := helpVault(t)
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}})
	var streamed strings.Builder
	a, err := p.Ask(context.Background(), Question{Text: "How do I recover a deleted note?", AllowWeb: true}, func(s string) error {
		streamed.WriteString(s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Extractive || a.Text != streamed.String() {
		t.Fatalf("extractive = %v; text and stream differ:\n%s\n---\n%s", a.Extractive, a.Text, streamed.String())
	}
	if !strings.HasPrefix(a.Text, ExtractiveHeading) {
		t.Fatalf("not labelled as retrieved passages:\n%s", a.Text)
	}
	for _, want := range []string{"1. [[en/Plugins/File recovery|File recovery]]", "   > ", "See managing notes .", "[[en/Files and folders/Manage notes|Manage notes]]"} {
		if !strings.Contains(a.Text, want) {
			t.Errorf("answer lacks %q:\n%s", want, a.Text)
		}
	}
	if strings.Contains(a.Text, "hunter2") {
		t.Fatalf("a personal note in an allow_web answer:\n%s", a.Text)
	}
	if len(a.Citations) == 0 || !a.Citations[0].Verified || a.Citations[0].Path != "en/Plugins/File recovery.md" {
		t.Fatalf("citations = %+v", a.Citations)
	}
	assertCitationsResolveInContext(t, store, a)
}

// wineNote is a clipping with a Markdown table, as in the demo vault.
const wineNote = `# Serving temperatures for red wine

Most reds are served too warm in a heated flat.

| Style | Examples | Serve at |
| --- | --- | --- |
| Light, fresh reds | Beaujolais, Frappato, young Pinot Noir | 12–14 °C |
| Full-bodied, tannic | Barolo, Northern Rhône Syrah, Bordeaux | 16–18 °C |
`

// An extractive answer quotes a table line by line, so every client can
// render it as a table.
func TestExtractiveAnswerKeepsTableRows(t *testing.T) {
	t.Parallel()
	store := mustIndex(t, nil, note("Clippings/Red wine.md", wineNote))
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}})
	a, err := p.Ask(context.Background(), Question{Text: "At what temperature do I serve red wine?"}, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := "   > Most reds are served too warm in a heated flat.\n   > \n" +
		"   > | Style | Examples | Serve at |\n   > | --- | --- | --- |\n" +
		"   > | Light, fresh reds | Beaujolais, Frappato, young Pinot Noir | 12–14 °C |\n" +
		"   > | Full-bodied, tannic | Barolo, Northern Rhône Syrah, Bordeaux | 16–18 °C |\n"
	if !strings.Contains(a.Text, want) {
		t.Fatalf("the table is not quoted row by row:\n%s", a.Text)
	}
}

// A passage cut inside a table ends at its last whole row, with the mark
// after it in a paragraph of its own; a table left without a body row goes,
// and a cut outside a table is at a word boundary.
func TestClipTextKeepsTableRowsWhole(t *testing.T) {
	t.Parallel()
	var rows strings.Builder
	for i := range 40 {
		fmt.Fprintf(&rows, "| wine %d | %d °C |\n", i, 10+i%8)
	}
	table := "| Wine | Serve at |\n| --- | --- |\n" + rows.String()
	intro := strings.Repeat("Reds are served too warm. ", 12) + "\n\n"
	for name, tc := range map[string]struct {
		text string
		max  int
		want string
	}{
		"cut in a body row":        {table, 100, "| Wine | Serve at |\n| --- | --- |\n| wine 0 | 10 °C |\n| wine 1 | 11 °C |\n| wine 2 | 12 °C |\n\n…"},
		"cut in the delimiter row": {intro + table, utf8.RuneCountInString(intro) + 25, strings.TrimSpace(intro) + "\n\n…"},
		"cut in prose":             {intro, 40, "Reds are served too warm. Reds are…"},
		"short":                    {table, 10000, table},
	} {
		t.Run(name, func(t *testing.T) {
			got := clipText(tc.text, tc.max)
			if got != tc.want {
				t.Fatalf("clipText(…, %d) =\n%s\nwant\n%s", tc.max, got, tc.want)
			}
			if n := utf8.RuneCountInString(got); n > tc.max {
				t.Fatalf("%d runes, more than %d", n, tc.max)
			}
		})
	}
}

// A clipped passage is a prefix of the text, at most max runes with its mark.
func FuzzClipText(f *testing.F) {
	f.Add(wineNote, 120)
	f.Add(wineNote, 60)
	f.Add("| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |", 30)
	f.Add("|\n|\n|", 2)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 1 || max > 4000 || !utf8.ValidString(s) {
			return
		}
		got := clipText(s, max)
		if n := utf8.RuneCountInString(got); n > max {
			t.Fatalf("clipText(%q, %d) = %q: %d runes", s, max, got, n)
		}
		if body := strings.TrimRight(strings.TrimSuffix(got, "…"), "\n"); !strings.HasPrefix(s, body) {
			t.Fatalf("clipText(%q, %d) = %q: not a prefix", s, max, got)
		}
	})
}

func TestSilentVault(t *testing.T) {
	t.Parallel()
	store := helpVault(t)
	model := newFakeModel(t, func([]Message) []string { return []string{"should not be asked"} })
	for name, gen := range map[string]ChatModel{"extractive": nil, "model": model.client(t)} {
		t.Run(name, func(t *testing.T) {
			p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Generator: gen})
			a, err := p.Ask(context.Background(), Question{Text: "zebra migration patterns", AllowWeb: true}, func(string) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if !a.Silent || strings.TrimSpace(a.Text) != SilentAnswer {
				t.Fatalf("silent = %v, answer %q", a.Silent, a.Text)
			}
		})
	}
	if n := len(model.recorded()); n != 0 {
		t.Fatalf("a silent vault without web results asked the model %d times", n)
	}
}

// The web is sought only with a searcher, allow_web and thin coverage, for
// the question itself; a failing provider leaves a vault-only answer.
func TestWebStage(t *testing.T) {
	t.Parallel()
	store := helpVault(t)
	results := []WebResult{{Title: "Zebra facts", URL: "https://example.org/zebra", Snippet: "They migrate."}}
	ask := func(t *testing.T, p *Pipeline, q Question) *Answer {
		t.Helper()
		a, err := p.Ask(context.Background(), q, func(string) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	silent := Question{Text: "zebra migration patterns", AllowWeb: true}

	t.Run("silent vault, extractive", func(t *testing.T) {
		web := &fakeWeb{search: func(string, int) ([]WebResult, error) { return results, nil }}
		a := ask(t, mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Web: web}), silent)
		if !slices.Equal(web.queries, []string{silent.Text}) {
			t.Fatalf("web queries = %q", web.queries)
		}
		if !strings.HasPrefix(a.Text, SilentAnswer) || !strings.Contains(a.Text, WebHeading+"\n\n- Zebra facts — <https://example.org/zebra>") {
			t.Fatalf("answer:\n%s", a.Text)
		}
		if wikilink.MatchString(a.Text) {
			t.Fatalf("a web result cited as a wikilink:\n%s", a.Text)
		}
	})
	t.Run("allow_web=false never searches", func(t *testing.T) {
		web := &fakeWeb{search: func(string, int) ([]WebResult, error) { return results, nil }}
		q := silent
		q.AllowWeb = false
		a := ask(t, mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Web: web}), q)
		if len(web.queries) != 0 || len(a.Web) != 0 {
			t.Fatalf("searched the web for %q", web.queries)
		}
	})
	t.Run("covered vault does not search", func(t *testing.T) {
		web := &fakeWeb{search: func(string, int) ([]WebResult, error) { return results, nil }}
		settings := testSettings()
		settings.Coverage = map[string]CoverageModel{testSpace.Model: nearestWithin(0.9)}
		ask(t, mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Web: web, Settings: settings}), Question{Text: "recover a deleted note", AllowWeb: true})
		if len(web.queries) != 0 {
			t.Fatalf("searched the web for %q", web.queries)
		}
	})
	t.Run("the model of the space searched judges coverage", func(t *testing.T) {
		for _, c := range []struct {
			name     string
			coverage map[string]CoverageModel
			searched bool
		}{
			{"the space's model covers it", map[string]CoverageModel{testSpace.Model: nearestWithin(0.9)}, false},
			{"the space's own model makes it thin", map[string]CoverageModel{testSpace.Model: alwaysThin}, true},
			{"another model's changes nothing", map[string]CoverageModel{testSpace.Model: nearestWithin(0.9), testSpace.Model + "-other": alwaysThin}, false},
		} {
			web := &fakeWeb{search: func(string, int) ([]WebResult, error) { return results, nil }}
			settings := testSettings()
			settings.Coverage = c.coverage
			ask(t, mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Web: web, Settings: settings}), Question{Text: "recover a deleted note", AllowWeb: true})
			if searched := len(web.queries) != 0; searched != c.searched {
				t.Errorf("%s: searched the web %v, want %v", c.name, searched, c.searched)
			}
		}
	})
	t.Run("provider failure degrades to the vault", func(t *testing.T) {
		web := &fakeWeb{search: func(string, int) ([]WebResult, error) { return nil, errors.New("duckduckgo: status 503") }}
		settings := testSettings()
		settings.Coverage = map[string]CoverageModel{testSpace.Model: alwaysThin}
		a := ask(t, mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Web: web, Settings: settings}), Question{Text: "recover a deleted note", AllowWeb: true})
		if len(web.queries) != 1 || len(a.Web) != 0 || !a.Extractive {
			t.Fatalf("queries %q, web %v", web.queries, a.Web)
		}
		if len(a.Notes) != 2 || a.Notes[1] != ThinNote || !strings.Contains(a.Text, "Web search failed, so this answer uses the vault only.") || !strings.Contains(a.Text, "[[en/Plugins/File recovery|File recovery]]") {
			t.Fatalf("notes %q, answer:\n%s", a.Notes, a.Text)
		}
	})
	t.Run("web results reach the model under their heading rule", func(t *testing.T) {
		web := &fakeWeb{search: func(string, int) ([]WebResult, error) { return results, nil }}
		model := newFakeModel(t, func([]Message) []string {
			return []string{SilentAnswer + "\n\n" + WebHeading + "\n\nZebras migrate <https://example.org/zebra>."}
		})
		a := ask(t, mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Web: web, Generator: model.client(t)}), silent)
		prompt := model.recorded()[0]
		user := prompt[len(prompt)-1].Content
		if !strings.Contains(user, "Vault passages:\n\n(none)") || !strings.Contains(user, "URL: https://example.org/zebra") {
			t.Fatalf("prompt:\n%s", user)
		}
		if !strings.Contains(a.Text, WebHeading) || len(a.Citations) != 0 {
			t.Fatalf("answer %q, citations %v", a.Text, a.Citations)
		}
	})
}

// A model that fails before its first word leaves an extractive answer
// with a note; a failed rewrite falls back to concatenation.
func TestModelFailuresDegrade(t *testing.T) {
	t.Parallel()
	store := helpVault(t)
	model := newFakeModel(t, nil)
	model.status = 500
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Generator: model.client(t)})
	q := Question{Text: "and deleted ones?", History: []Turn{{Role: "user", Text: "how do I recover a note"}}, AllowWeb: true}
	a, err := p.Ask(context.Background(), q, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !a.Extractive || len(a.Notes) != 1 || !strings.Contains(a.Text, "[[en/Plugins/File recovery|File recovery]]") {
		t.Fatalf("extractive %v, notes %q:\n%s", a.Extractive, a.Notes, a.Text)
	}
	if a.Retrieval.Query != "how do I recover a note and deleted ones?" {
		t.Fatalf("query after a failed rewrite = %q", a.Retrieval.Query)
	}
	if !strings.Contains(a.Retrieval.Trace.Stages[0].Note, "rewrite failed") {
		t.Fatalf("trace: %+v", a.Retrieval.Trace.Stages[0])
	}
}

// Deleted notes never come back: not from search, not by expansion, and a
// citation of one is unverified.
func TestDeletedNotesNeverAppear(t *testing.T) {
	t.Parallel()
	store := quasarVault(t)
	if _, err := store.Feed().Apply(context.Background(), index.Batch{Deletes: []string{"Space/Quasar light.md", "Space/Quasar redshift.md", "Space/Pulsar.md"}}); err != nil {
		t.Fatal(err)
	}
	model := newFakeModel(t, func([]Message) []string {
		return []string{"Bright [[Space/Quasar light|Quasar light]], pulsing [[Pulsar]]."}
	})
	settings := testSettings()
	settings.GraphMaxSiblings, settings.GraphMaxSlots = 10, 4
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Generator: model.client(t), Settings: settings})
	a, err := p.Ask(context.Background(), Question{Text: "quasar light pulsar", AllowWeb: true}, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	gone := []string{"Space/Quasar light.md", "Space/Quasar redshift.md", "Space/Pulsar.md"}
	for _, s := range a.Retrieval.Trace.Stages {
		for _, h := range s.Hits {
			if slices.Contains(gone, h.Path) {
				t.Errorf("deleted %s in stage %s", h.Path, s.Name)
			}
		}
	}
	if countGraph(a.Retrieval.Hits) == 0 {
		t.Fatal("expansion should still reach the remaining siblings")
	}
	if a.Text != "Bright Quasar light (unverified citation), pulsing Pulsar (unverified citation)." {
		t.Fatalf("answer: %s", a.Text)
	}
	for _, c := range a.Citations {
		if c.Verified || c.Reason != ReasonNoSuchNote {
			t.Fatalf("citation of a deleted note: %+v", c)
		}
	}
}

func TestGraphEnabledIsAnOffSwitch(t *testing.T) {
	t.Parallel()
	store := &countingSearcher{Search: quasarVault(t).Search()}
	settings := testSettings()
	settings.GraphEnabled = false
	r := mustRetrieve(t, mustPipeline(t, Options{Searcher: store, Embedder: &bagEmbedder{}, Settings: settings}), Question{Text: "quasar", AllowWeb: true})
	if n := store.neighbours.Load(); n != 0 || countGraph(r.Hits) != 0 {
		t.Fatalf("graph off: %d neighbour reads, %d expanded hits", n, countGraph(r.Hits))
	}
	if len(r.Hits) != 3 {
		t.Fatalf("graph off: %d hits, want the 3 direct ones", len(r.Hits))
	}
	settings.GraphEnabled = true
	r = mustRetrieve(t, mustPipeline(t, Options{Searcher: store, Embedder: &bagEmbedder{}, Settings: settings}), Question{Text: "quasar", AllowWeb: true})
	if n := store.neighbours.Load(); n != 1 || countGraph(r.Hits) == 0 {
		t.Fatalf("graph on: %d neighbour reads, %d expanded hits", n, countGraph(r.Hits))
	}
}

func TestEmbedderDownDegradesToFullText(t *testing.T) {
	t.Parallel()
	emb := &bagEmbedder{}
	emb.down.Store(true)
	r := mustRetrieve(t, mustPipeline(t, Options{Searcher: quasarVault(t).Search(), Embedder: emb}), Question{Text: "quasar", AllowWeb: true})
	if !r.FullTextOnly || len(r.Direct) == 0 {
		t.Fatalf("full text only = %v, %d direct hits", r.FullTextOnly, len(r.Direct))
	}
	for _, h := range r.Direct {
		if h.From(FromVector) || h.HasDistance {
			t.Fatalf("vector hit without a query vector: %+v", h)
		}
	}
	if note := r.Trace.Stages[0].Note; !strings.Contains(note, "embedder unavailable") || !strings.Contains(note, "connection refused") {
		t.Fatalf("trace: %q", note)
	}
	if r.Thin {
		t.Fatal("without a query vector thin coverage is judged by silence only")
	}
}

// A request cancelled while its query is embedded ends with the
// cancellation, not as a full-text answer with a warning that the embedder
// failed.
func TestCancelledWhileEmbeddingIsNoEmbedderFailure(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	emb := &blockingEmbedder{started: make(chan struct{})}
	go func() {
		<-emb.started
		cancel()
	}()
	var log bytes.Buffer
	p := mustPipeline(t, Options{Searcher: quasarVault(t).Search(), Embedder: emb, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if _, err := p.Retrieve(ctx, Question{Text: "quasar", AllowWeb: true}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Retrieve = %v, want %v", err, context.Canceled)
	}
	if log.Len() > 0 {
		t.Fatalf("logged:\n%s", log.String())
	}
}

// blockingEmbedder embeds nothing: it closes started and waits for its
// context to end.
type blockingEmbedder struct{ started chan struct{} }

func (e *blockingEmbedder) EmbedQuery(ctx context.Context, _ vault.EmbeddingSpace, _ string) (vault.QueryVector, error) {
	close(e.started)
	<-ctx.Done()
	return vault.QueryVector{}, ctx.Err()
}

func TestQuestionOverridesSizes(t *testing.T) {
	t.Parallel()
	p := mustPipeline(t, Options{Searcher: quasarVault(t).Search(), Embedder: &bagEmbedder{}})
	r := mustRetrieve(t, p, Question{Text: "quasar", AllowWeb: true, K: Overrides{FinalTopK: 2, FusionTopK: 4, VectorTopK: 5}})
	if len(r.Hits) != 2 || len(r.Direct) != 4 || len(stageHits(r, "vector")) != 5 {
		t.Fatalf("hits %d, direct %d, vector %d", len(r.Hits), len(r.Direct), len(stageHits(r, "vector")))
	}
	if _, err := p.Retrieve(context.Background(), Question{Text: "  "}); err == nil {
		t.Fatal("an empty question should fail")
	}
	q, err := p.WithSettings(Settings{FinalTopK: 1, FusionTopK: 1, FTSTopK: 1})
	if err != nil || len(mustRetrieve(t, q, Question{Text: "quasar"}).Hits) != 1 {
		t.Fatalf("WithSettings: %v", err)
	}
	if _, err := p.WithSettings(Settings{FinalTopK: 0}); err == nil {
		t.Fatal("final_top_k 0 should be refused")
	}
}

func TestRankNotesRaisesFinalTopK(t *testing.T) {
	t.Parallel()
	settings := testSettings()
	settings.FusionTopK, settings.FinalTopK = 4, 2
	p := mustPipeline(t, Options{Searcher: quasarVault(t).Search(), Embedder: &bagEmbedder{}, Settings: settings})
	q := Question{Text: "quasar", AllowWeb: true}
	ranked, inContext, err := p.RankNotes(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	answer := mustRetrieve(t, p, q)
	if diff := cmp.Diff(answer.Notes(), inContext); diff != "" {
		t.Errorf("inContext is not the answer's notes (-want +got):\n%s", diff)
	}
	// Every direct hit plus the graph quota: the whole ranking.
	whole := mustRetrieve(t, p, Question{Text: q.Text, AllowWeb: true, K: Overrides{FinalTopK: len(answer.Direct) + settings.GraphMaxSlots}})
	if diff := cmp.Diff(whole.Notes(), ranked); diff != "" {
		t.Errorf("ranked is not the whole ranking (-want +got):\n%s", diff)
	}
	if len(ranked) <= len(inContext) || countGraph(whole.Hits) > settings.GraphMaxSlots {
		t.Errorf("ranked %v beyond inContext %v, %d expanded hits (quota %d)", ranked, inContext, countGraph(whole.Hits), settings.GraphMaxSlots)
	}
	for _, h := range answer.Direct {
		if !slices.Contains(ranked, h.Chunk.Path) {
			t.Errorf("direct hit %s is not ranked: %v", h.Chunk.Path, ranked)
		}
	}

	// When final_top_k holds every direct hit and the quota, the answer's
	// list is the ranking.
	q.K.FinalTopK = 10
	ranked, inContext, err = p.RankNotes(context.Background(), q)
	if err != nil || !cmp.Equal(ranked, inContext) || !cmp.Equal(inContext, mustRetrieve(t, p, q).Notes()) {
		t.Errorf("final_top_k 10: ranked %v, inContext %v, %v", ranked, inContext, err)
	}
}

// A result's keys are what ask --json prints and later surfaces serve.
func TestResultKeys(t *testing.T) {
	t.Parallel()
	p := mustPipeline(t, Options{Searcher: quasarVault(t).Search(), Embedder: &bagEmbedder{}})
	keys := func(v any) []string {
		t.Helper()
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	r := mustRetrieve(t, p, Question{Text: "quasar", AllowWeb: true})
	res := NewResult(r, nil, false)
	if diff := cmp.Diff([]string{"coverage", "full_text_only", "hits", "query", "question", "scope", "silent", "thin"}, keys(res)); diff != "" {
		t.Errorf("retrieval-only keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"citation", "distance", "path", "score", "section", "sensitivity", "sources"}, keys(res.Hits[0])); diff != "" {
		t.Errorf("hit keys (-want +got):\n%s", diff)
	}
	if h := res.Hits[0]; h.Citation != Link(r.Hits[0].Chunk.Path, r.Hits[0].Chunk.Title) || res.Scope != "open" {
		t.Errorf("hit %+v, scope %q", h, res.Scope)
	}
	a, err := p.Ask(context.Background(), Question{Text: "quasar", AllowWeb: true}, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	res = NewResult(a.Retrieval, a, true)
	if !slices.Contains(keys(res), "answer") || !slices.Contains(keys(res), "trace") || res.Trace != &a.Retrieval.Trace {
		t.Errorf("with an answer and the trace: keys %v", keys(res))
	}
	// No hits is an empty list, not null.
	if data, _ := json.Marshal(NewResult(&Retrieval{}, nil, false)); !strings.Contains(string(data), `"hits":[]`) {
		t.Errorf("no hits: %s", data)
	}
}
