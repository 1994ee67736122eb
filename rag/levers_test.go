package rag

import (
	"context"
	"testing"

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
		f      Fusion
		vector []vault.Chunk
		first  string
		score  float64
	}{
		{"off", Fusion{FTSMargin: 0.05, VectorGap: 0.03}, vector, "a.md", tie},
		{"no arm confident", Fusion{Bonus: 1, FTSMargin: 0.11, VectorGap: 0.05}, vector, "a.md", tie},
		{"full text at its margin", Fusion{Bonus: 1, FTSMargin: 0.1, VectorGap: 0.05}, vector, "b.md", tie + 1.0/61},
		{"full text above its margin", Fusion{Bonus: 0.5, FTSMargin: 0.05, VectorGap: 0.05}, vector, "b.md", tie + 0.5/61},
		{"vector at its gap", Fusion{Bonus: 1, FTSMargin: 0.2, VectorGap: 0.04 - 1e-9}, vector, "a.md", tie + 1.0/61},
		{"vector below its gap", Fusion{Bonus: 1, FTSMargin: 0.2, VectorGap: 0.04 + 1e-9}, vector, "a.md", tie},
		{"a single vector note", Fusion{Bonus: 1, FTSMargin: 0.2, VectorGap: 0.05}, vector[:1], "a.md", tie + 1.0/61},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Fuse(c.vector, fts, c.f)
			if got[0].Chunk.Path != c.first || !near(got[0].Score, c.score) {
				t.Errorf("first %s with %v, want %s with %v (%+v)", got[0].Chunk.Path, got[0].Score, c.first, c.score, fusedRows(got))
			}
		})
	}
	// b's second chunk, close behind its first, is not the second note: a
	// is, 1 in 10 behind.
	twoChunks := []vault.Chunk{fts[0], chunk(3, "b.md", 1, -9.95), fts[1]}
	if got := Fuse(nil, twoChunks, Fusion{Bonus: 1, FTSMargin: 0.1}); got[0].Chunk.RowID != 2 || !near(got[0].Score, 2.0/61) {
		t.Errorf("a note's second chunk taken for its second note: %+v", fusedRows(got))
	}
	// By note, the bonus goes to the note's score.
	got := Fuse(vector, fts, Fusion{ByNote: true, Bonus: 1, FTSMargin: 0.05, VectorGap: 0.05})
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
		got := Fuse(vector, nil, Fusion{Language: c.lang, ForeignCut: c.cut})
		if en, sv, u := score(got, "en/Sync.md"), score(got, "sv/Sync.md"), score(got, "Untitled.md"); !near(en, c.en) || !near(sv, c.sv) || !near(u, c.untitled) {
			t.Errorf("question in %q, cut %v: en %v sv %v untitled %v, want %v %v %v", c.lang, c.cut, en, sv, u, c.en, c.sv, c.untitled)
		}
	}
	// A foreign note's confident-first bonus is cut like its vote.
	got := Fuse(vector, nil, Fusion{Language: "sv", ForeignCut: 0.5, Bonus: 1, VectorGap: 0.05})
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
		if got := Language(in); got != want {
			t.Errorf("Language(%q) = %q, want %q", in, got, want)
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
	hits, err := s.SearchFTS(context.Background(), FTSText("I\u0307nternete ne?"), 5, vault.ScopeOpen, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Path != "tr/Analitik.md" {
		t.Errorf("searching %q found %v, want tr/Analitik.md", FTSText("I\u0307nternete ne?"), hits)
	}
}
