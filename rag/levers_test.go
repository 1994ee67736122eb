package rag

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// An arm's confident first note gets the bonus, at and above the arm's
// threshold and not below it; a note's second chunk is not its second note.
// Notes a and b tie without a bonus (a first, by input order); a's vector
// lead is 0.04, b's full-text lead 1 in 10.
func TestFuseConfidentBonus(t *testing.T) {
	t.Parallel()
	vector := []vault.Chunk{chunk(1, "a.md", 0, 0.10), chunk(2, "b.md", 0, 0.14)}
	fts := []vault.Chunk{chunk(2, "b.md", 0, -10), chunk(1, "a.md", 0, -9)}
	tie := 1.0/61 + 1.0/62
	for _, c := range []struct {
		name   string
		f      fusionOptions
		vector []vault.Chunk
		first  string
		score  float64
	}{
		{"off", fusionOptions{FTSMargin: 0.05, VectorGap: 0.03}, vector, "a.md", tie},
		{"no arm confident", fusionOptions{Bonus: 1, FTSMargin: 0.11, VectorGap: 0.05}, vector, "a.md", tie},
		{"full text at its margin", fusionOptions{Bonus: 1, FTSMargin: 0.1, VectorGap: 0.05}, vector, "b.md", tie + 1.0/61},
		{"full text above its margin", fusionOptions{Bonus: 0.5, FTSMargin: 0.05, VectorGap: 0.05}, vector, "b.md", tie + 0.5/61},
		{"vector at its gap", fusionOptions{Bonus: 1, FTSMargin: 0.2, VectorGap: 0.04 - 1e-9}, vector, "a.md", tie + 1.0/61},
		{"vector below its gap", fusionOptions{Bonus: 1, FTSMargin: 0.2, VectorGap: 0.04 + 1e-9}, vector, "a.md", tie},
		{"a single vector note", fusionOptions{Bonus: 1, FTSMargin: 0.2, VectorGap: 0.05}, vector[:1], "a.md", tie + 1.0/61},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := fuseRanks(c.vector, fts, c.f)
			if got[0].Chunk.Path != c.first || !near(got[0].Score, c.score) {
				t.Errorf("first %s with %v, want %s with %v (%+v)", got[0].Chunk.Path, got[0].Score, c.first, c.score, fusedRows(got))
			}
		})
	}
	// b's second chunk, close behind its first, is not the second note: a
	// is, 1 in 10 behind.
	twoChunks := []vault.Chunk{fts[0], chunk(3, "b.md", 1, -9.95), fts[1]}
	if got := fuseRanks(nil, twoChunks, fusionOptions{Bonus: 1, FTSMargin: 0.1}); got[0].Chunk.RowID != 2 || !near(got[0].Score, 2.0/61) {
		t.Errorf("a note's second chunk taken for its second note: %+v", fusedRows(got))
	}
	// By note, the bonus goes to the note's score.
	got := fuseRanks(vector, fts, fusionOptions{ByNote: true, Bonus: 1, FTSMargin: 0.05, VectorGap: 0.05})
	if got[0].Chunk.RowID != 2 || !near(got[0].Score, tie+1.0/61) {
		t.Errorf("by note: first %d with %v, want b with 1/62 + 2/61", got[0].Chunk.RowID, got[0].Score)
	}
}

// For a non-English question, a vector hit from a note in another language
// loses ForeignCut of its vote; a note in the question's language, one of
// unknown language, and every note for an English question keep theirs.
func TestFuseLanguageVote(t *testing.T) {
	t.Parallel()
	text := func(h vault.Chunk, body string) vault.Chunk { h.Body = body; return h }
	vector := []vault.Chunk{
		text(chunk(1, "en/Sync.md", 0, 0.2), "How to restore a note from the version history of the sync service."),
		text(chunk(2, "sv/Sync.md", 0, 0.3), "Hur du återställer en anteckning från versionshistoriken i Sync."),
		text(chunk(3, "Untitled.md", 0, 0.4), "Sync 1.2"),
	}
	score := func(hits []Hit, path string) float64 {
		for _, h := range hits {
			if h.Chunk.Path == path {
				return h.Score
			}
		}
		return 0
	}
	for _, c := range []struct {
		lang     string
		cut      float64
		en, sv   float64
		untitled float64
	}{
		{"sv", 1, 0, 1.0 / 62, 1.0 / 63},
		{"sv", 0.5, 0.5 / 61, 1.0 / 62, 1.0 / 63},
		{"sv", 0, 1.0 / 61, 1.0 / 62, 1.0 / 63},
		{"tr", 1, 0, 0, 1.0 / 63},
		{"en", 1, 1.0 / 61, 1.0 / 62, 1.0 / 63},
		{"", 1, 1.0 / 61, 1.0 / 62, 1.0 / 63},
	} {
		got := fuseRanks(vector, nil, fusionOptions{Language: c.lang, ForeignCut: c.cut})
		if en, sv, u := score(got, "en/Sync.md"), score(got, "sv/Sync.md"), score(got, "Untitled.md"); !near(en, c.en) || !near(sv, c.sv) || !near(u, c.untitled) {
			t.Errorf("question in %q, cut %v: en %v sv %v untitled %v, want %v %v %v", c.lang, c.cut, en, sv, u, c.en, c.sv, c.untitled)
		}
	}
	// A foreign note's confident-first bonus is cut like its vote.
	got := fuseRanks(vector, nil, fusionOptions{Language: "sv", ForeignCut: 0.5, Bonus: 1, VectorGap: 0.05})
	if en := score(got, "en/Sync.md"); !near(en, 0.5/61+0.5/61) {
		t.Errorf("foreign confident note scored %v, want half a vote and half a bonus", en)
	}
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"how can I see every note that points to the note I'm reading right now?":               "en",
		"Hur gör jag en färgad ruta som lyfter fram ett tips eller en varning i en anteckning?": "sv",
		"Kan taggar ha undernivåer, till exempel #projekt/alfa?":                                "sv",
		"Sync Plus planında yükleyebileceğim en büyük dosya ne kadar?":                          "tr",
		"İnternete koyduğum sayfaları kaç kişinin okuduğunu görebilir miyim?":                   "tr",
		"Obsidian Sync":       "", // no sign at all
		"i":                   "", // English "I", Swedish "in"
		"the och":             "", // one sign each
		"the and of och":      "en",
		"the and och att det": "", // 2 against 3: neither has twice the other's
		"the and of to och":   "en",
	} {
		if got := language(in); got != want {
			t.Errorf("language(%q) = %q, want %q", in, got, want)
		}
	}
}

// Turkish dotted capital İ, precomposed or decomposed (I + U+0307), folds
// to i, so a word that starts with it is searched whole and finds the note
// that has it, as FTS5 folds it there.
func TestFTSTextFoldsTurkishDottedI(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"İnternete koyduğum sayfalar":         "internete koyduğum sayfalar",
		"I\u0307nternete":                     "internete",
		"i\u0307nternete":                     "internete",
		"İSTANBUL ve IĞDIR":                   "istanbul iğdir",
		"Hur återställer jag en İnternet-fil": "återställer internet fil",
	} {
		if got := FTSText(in); got != want {
			t.Errorf("FTSText(%q) = %q, want %q", in, got, want)
		}
	}
	s := mustIndex(t, nil,
		note("tr/Analitik.md", "# Analitik\n\nİnternete koyduğun sayfaların ziyaretçilerini gör.\n"),
		note("tr/Tuval.md", "# Tuval\n\nNotları kartlar gibi yerleştir.\n"))
	hits, err := s.Search().SearchFTS(context.Background(), FTSText("I\u0307nternete ne?"), 5, vault.ScopeOpen, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Path != "tr/Analitik.md" {
		t.Errorf("searching %q found %v, want tr/Analitik.md", FTSText("I\u0307nternete ne?"), hits)
	}
}

// mapVault is a map of content linking to twelve notes: one about the
// question's subject (pinyin.md) that neither search ranks among the
// direct hits, eleven about other things, and four personal notes nearer
// the question than any of them. Two more open notes match the question
// better than pinyin.md, so the direct hits are the map and those two.
func mapVault(t *testing.T) *index.Store {
	t.Helper()
	links := "[[pinyin]]"
	notes := []vault.NoteInput{
		note("pinyin.md", "# Pinyin\n\nType chinese with a keyboard layout, tones and candidate windows for everyday input."),
		note("a.md", "# Segmenting\n\nPlugins for chinese notes: segmenting, search, fonts."),
		note("b.md", "# Chinese notes\n\nWriting chinese notes with plugins in a vault."),
	}
	// The test embedder hashes words into few dimensions: none of these
	// words shares one with the question.
	for _, name := range []string{"apple", "pear", "cherry", "peach", "melon", "lime", "fig", "kiwi", "mango", "olive", "onion"} {
		links += " [[" + name + "]]"
		notes = append(notes, note(name+".md", fmt.Sprintf("# %s\n\nGardening, tomatoes, watering schedule: %s.", name, name)))
	}
	for i := range 4 {
		name := fmt.Sprintf("Personal/diary%d", i)
		links += " [[" + name + "]]"
		notes = append(notes, note(name+".md", fmt.Sprintf("# Diary %d\n\nMy chinese lessons and my chinese notes %d.", i, i)))
	}
	notes = append(notes, note("Chinese plugins.md", "# Plugins for chinese notes\n\nPlugins for chinese notes, all of them: "+links))
	return mustIndex(t, []string{"Personal/**"}, notes...)
}

// A map of content among the hits (a note with at least GraphMapMinLinks
// links) gives its linked note nearest the question a place right behind
// it, in a slot only such a note takes; a note with fewer links is no map,
// and with no map slot nothing changes. Open-only, the personal notes the
// map links to, nearer the question than pinyin.md and more of them than
// any k, are never reached, nor counted as its links.
func TestMapOfContentHop(t *testing.T) {
	t.Parallel()
	store := mapVault(t)
	settings := func(slots, minLinks int) Settings {
		s := testSettings()
		s.GraphMaxSlots, s.FinalTopK, s.GraphMapSlots, s.GraphMapMinLinks = 0, 3, slots, minLinks
		return s
	}
	for _, c := range []struct {
		name            string
		slots, minLinks int
		allowWeb        bool
		member          string // the note behind the map, "" for none
	}{
		{"open only: the open note nearest the question", 1, 12, true, "pinyin.md"},
		{"the whole vault: a personal note may be it", 1, 16, false, "Personal/diary"},
		{"no map slot", 0, 12, true, ""},
		// Open-only, the links to personal notes are not counted.
		{"open only: fewer links than a map needs", 1, 13, true, ""},
		{"fewer links than a map needs", 1, 17, false, ""},
		{"no map size", 1, 0, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Settings: settings(c.slots, c.minLinks)})
			r := mustRetrieve(t, p, Question{Text: "plugins for chinese notes", AllowWeb: c.allowWeb})
			paths := hitPaths(r.Hits)
			if c.allowWeb && slices.ContainsFunc(paths, func(p string) bool { return strings.HasPrefix(p, "Personal/") }) {
				t.Fatalf("open-only hits hold a personal note: %q", paths)
			}
			at := slices.Index(paths, "Chinese plugins.md")
			if at < 0 {
				t.Fatalf("the map is not a hit: %q", paths)
			}
			var behind Hit
			if at+1 < len(r.Hits) {
				behind = r.Hits[at+1]
			}
			switch {
			case c.member == "":
				for _, h := range r.Hits {
					if h.Graph != nil && h.Graph.Map {
						t.Errorf("%s reached from a map without a map slot: %q", h.Chunk.Path, paths)
					}
				}
			case behind.Graph == nil || !behind.Graph.Map || !strings.HasPrefix(behind.Chunk.Path, c.member):
				t.Errorf("behind the map: %q (graph %+v), want %s… linked from it; hits %q", behind.Chunk.Path, behind.Graph, c.member, paths)
			}
		})
	}
}
