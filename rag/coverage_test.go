package rag

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

func TestCoverageModelValidate(t *testing.T) {
	t.Parallel()
	good := nearestWithin(0.5)
	if err := good.Validate(); err != nil {
		t.Fatalf("a good model: %v", err)
	}
	for name, change := range map[string]func(m *CoverageModel){
		"no features":       func(m *CoverageModel) { m.Features, m.Mean, m.Scale, m.Weights = nil, nil, nil, nil },
		"lengths differ":    func(m *CoverageModel) { m.Weights = m.Weights[:1] },
		"unknown feature":   func(m *CoverageModel) { m.Features = []string{"d1", "made_up"} },
		"zero scale":        func(m *CoverageModel) { m.Scale = []float64{0, 1} },
		"NaN scale":         func(m *CoverageModel) { m.Scale = []float64{math.NaN(), 1} },
		"silent above thin": func(m *CoverageModel) { m.Silent, m.Thin = 0.6, 0.5 },
		"thin above grey":   func(m *CoverageModel) { m.Thin, m.Grey = 0.7, 0.6 },
		"grey above one":    func(m *CoverageModel) { m.Grey = 1.5 },
	} {
		m := nearestWithin(0.5)
		m.Features, m.Mean, m.Scale, m.Weights = append([]string(nil), m.Features...), append([]float64(nil), m.Mean...),
			append([]float64(nil), m.Scale...), append([]float64(nil), m.Weights...)
		change(&m)
		if err := m.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	s := testSettings()
	s.Coverage[testSpace.Model] = CoverageModel{Name: "broken"}
	if _, err := New(Options{Searcher: helpVault(t).Search(), Settings: s}); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("a pipeline with a broken coverage model: %v", err)
	}
}

// The judgement's lines split the probability into its outcomes, the grey
// band above the thin line.
func TestCoverageModelJudge(t *testing.T) {
	t.Parallel()
	m := CoverageModel{Name: "m", Features: []string{FeatureNearest}, Mean: []float64{0}, Scale: []float64{1}, Weights: []float64{1},
		Thin: 0.3, Silent: 0.1, Grey: 0.6}
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	for _, c := range []struct {
		p    float64
		want Outcome
		grey bool
	}{{0.05, OutcomeSilent, false}, {0.2, OutcomeThin, false}, {0.4, OutcomeCovered, true}, {0.9, OutcomeCovered, false}} {
		got := m.judge(map[string]float64{FeatureNearest: logit(c.p)})
		if got.Outcome != c.want || got.Grey != c.grey || math.Abs(got.Score-c.p) > 1e-9 || got.Model != "m" {
			t.Errorf("p %.2f: %+v, want %s grey %v", c.p, got, c.want, c.grey)
		}
	}
}

func TestNameWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		q    string
		want string
	}{
		{"is there a plugin that syncs Calendly bookings?", "calendly"},
		{"can I pull my YNAB budget into a note", "ynab"},
		{"is there a monday.com integration?", "monday com"},
		{"I'm coming from Logseq. Is there a guide?", "logseq"},
		{"Where do deleted notes go?", ""},
		{"how do I bake bread", ""},
	} {
		ws := []questionWord{}
		for _, w := range strings.Fields(FTSText(c.q)) {
			ws = append(ws, questionWord{word: w, key: w})
		}
		var got []string
		for _, w := range nameWords(c.q, ws) {
			got = append(got, w.word)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("nameWords(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}

func TestStemKey(t *testing.T) {
	t.Parallel()
	for w, want := range map[string]string{"plugins": "plugi", "plugin": "plugi", "sync": "sync", "notes": "notes", "anteckningar": "antecknin", "çaylarımız": "çayları"} {
		key, prefix := stemKey(w)
		if key != want || prefix != (key != w) {
			t.Errorf("stemKey(%q) = %q, %v; want %q", w, key, prefix, want)
		}
	}
}

// An index still reading the vault for the first time never calls a
// question silent: the judgement says indexing, with how far it is, and
// an answer says so; one whose chunks mostly wait for their vectors is
// judged by the full-text fit.
func TestCoverageWhileIndexing(t *testing.T) {
	t.Parallel()
	store := helpVault(t)
	offTopic := Question{Text: "zebra migration patterns"}
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}})
	if r := mustRetrieve(t, p, offTopic); r.Coverage.Outcome != OutcomeSilent {
		t.Fatalf("the premise: a complete index is silent on %q, got %+v", offTopic.Text, r.Coverage)
	}
	scanning := func(context.Context, vault.Scope) IndexState { return IndexState{Scanning: true, Done: 12, Total: 340} }
	p = mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, IndexState: scanning})
	r := mustRetrieve(t, p, offTopic)
	if r.Coverage.Outcome != OutcomeIndexing || r.Silent || r.Coverage.Done != 12 || r.Coverage.Total != 340 {
		t.Fatalf("while scanning: %+v, silent %v", r.Coverage, r.Silent)
	}
	a, err := p.Ask(context.Background(), offTopic, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(a.Text, SilentAnswer) || !strings.Contains(a.Text, "still being indexed (12 of 340 notes so far)") {
		t.Fatalf("answer while scanning:\n%s", a.Text)
	}
	if r := mustRetrieve(t, p, Question{Text: "recover a deleted note"}); r.Coverage.Outcome != OutcomeCovered {
		t.Fatalf("a covered question while scanning: %+v", r.Coverage)
	}

	settings := testSettings()
	settings.FullTextCoverage = alwaysThin
	settings.FullTextCoverage.Name = "the full-text fit"
	halfEmbedded := func(context.Context, vault.Scope) IndexState { return IndexState{Unembedded: 0.5} }
	p = mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Settings: settings, IndexState: halfEmbedded})
	if r := mustRetrieve(t, p, Question{Text: "recover a deleted note"}); r.Coverage.Model != "the full-text fit" || r.Features[FeatureNearest] != 1 {
		t.Fatalf("half embedded: judged by %q with the nearest distance %v", r.Coverage.Model, r.Features[FeatureNearest])
	}
	p = mustPipeline(t, Options{Searcher: store.Search(), Settings: settings})
	if r := mustRetrieve(t, p, Question{Text: "recover a deleted note"}); r.Coverage.Model != "the full-text fit" || !r.FullTextOnly {
		t.Fatalf("without an embedder: judged by %q", r.Coverage.Model)
	}
	settings.FullTextCoverage = CoverageModel{}
	p = mustPipeline(t, Options{Searcher: store.Search(), Settings: settings})
	if r := mustRetrieve(t, p, Question{Text: "recover a deleted note"}); r.Coverage.Outcome != OutcomeCovered {
		t.Fatalf("without any fit, a question full text matches: %+v", r.Coverage)
	}
	if r := mustRetrieve(t, p, offTopic); r.Coverage.Outcome != OutcomeSilent {
		t.Fatalf("without any fit, a question nothing matches: %+v", r.Coverage)
	}
}

// The words' counts are taken in the request's scope: for a request that
// allows the web, a word only a personal note holds is absent from the
// vault.
func TestCoverageCountsInScope(t *testing.T) {
	t.Parallel()
	store := helpVault(t)
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}})
	q := "hunter2 snapshots"
	all := mustRetrieve(t, p, Question{Text: q})
	open := mustRetrieve(t, p, Question{Text: q, AllowWeb: true})
	if all.Features[FeatureAbsent] != 0 || open.Features[FeatureAbsent] == 0 {
		t.Fatalf("absent share: %v over the whole vault, %v over open notes; want 0 and more", all.Features[FeatureAbsent], open.Features[FeatureAbsent])
	}
}
