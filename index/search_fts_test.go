package index

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// ftsRef is a hit of the reference search: one FTS5 query over every
// chunk that holds a word, as SearchFTS ran before it had passes.
type ftsRef struct {
	rowid int64
	score float64
}

// referenceFTS ranks every chunk that holds one of words (by bm25() with
// w's weights), filtered by scope before the limit.
func referenceFTS(tb testing.TB, s *Store, words []string, k int, scope vault.Scope, w vault.FieldWeights) []ftsRef {
	tb.Helper()
	if len(words) == 0 {
		return nil
	}
	filter, weights, _ := ftsColumns(w)
	phrases := make([]string, len(words))
	for i, word := range words {
		phrases[i] = `"` + word + `"`
	}
	rows, err := s.db().Query(`SELECT chunks_fts.rowid, bm25(chunks_fts, `+weights+`) AS score
		FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid
		WHERE chunks_fts MATCH ? AND (? = 0 OR c.sensitivity = 'open')
		ORDER BY score, chunks_fts.rowid LIMIT ?`, filter+"("+strings.Join(phrases, " OR ")+")", scope.OpenOnly(), k)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []ftsRef
	for rows.Next() {
		var h ftsRef
		if err := rows.Scan(&h.rowid, &h.score); err != nil {
			tb.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

// keptWords are the words SearchFTS should search for: those some chunk
// holds and fewer than half do, or all those some chunk holds when none is
// that rare; and the floor words, those that half the chunks or more hold
// when some are rarer. Counted here on their own, so a stale count in
// SearchFTS shows.
func keptWords(tb testing.TB, s *Store, words []string, w vault.FieldWeights) (kept, floor []string) {
	tb.Helper()
	filter, _, _ := ftsColumns(w)
	total := count(tb, s, `SELECT count(*) FROM chunks`)
	for _, word := range words {
		switch n := count(tb, s, `SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?`, filter+`"`+word+`"`); {
		case n == 0:
		case 2*n < total:
			kept = append(kept, word)
		default:
			floor = append(floor, word)
		}
	}
	if len(kept) == 0 {
		return floor, nil
	}
	return kept, floor
}

// keptRanking is what SearchFTS should return for text, from the reference
// search: its k+1 best over the kept words and, when fewer than k chunks
// hold one, the chunks that hold only floor words, by their scores.
func keptRanking(tb testing.TB, s *Store, text string, k int, scope vault.Scope, w vault.FieldWeights) []ftsRef {
	tb.Helper()
	kept, floor := keptWords(tb, s, ftsWords(text), w)
	out := referenceFTS(tb, s, kept, k+1, scope, w)
	if len(out) >= k || len(floor) == 0 {
		return out
	}
	for _, h := range referenceFTS(tb, s, floor, k+1, scope, w) {
		if !slices.ContainsFunc(out, func(o ftsRef) bool { return o.rowid == h.rowid }) {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b ftsRef) int { return cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(a.rowid, b.rowid)) })
	return out[:min(len(out), k+1)]
}

// sameRanking fails unless got holds the first k of want (the reference's
// k+1 best) in want's order with want's scores, within tol; chunks whose
// scores are within tol of each other may come in either order, the k-th
// and the one past it too. With skipBelow, want's chunks that score (as a
// positive number) below it are left out of both.
func sameRanking(t *testing.T, what string, got []vault.Chunk, want []ftsRef, k int, tol, skipBelow float64) {
	t.Helper()
	want = slices.DeleteFunc(want, func(h ftsRef) bool { return -h.score < skipBelow })
	got = slices.DeleteFunc(slices.Clone(got), func(h vault.Chunk) bool { return -h.Score < skipBelow })
	n := min(k, len(want))
	if len(got) != n {
		t.Fatalf("%s: %d hits, want %d", what, len(got), n)
	}
	near := func(i, j int) bool { return j >= 0 && j < len(want) && math.Abs(want[i].score-want[j].score) <= tol }
	for i := range n {
		if math.Abs(got[i].Score-want[i].score) > tol {
			t.Fatalf("%s: hit %d scores %v, want %v", what, i, got[i].Score, want[i].score)
		}
		if got[i].RowID != want[i].rowid && !near(i, i-1) && !near(i, i+1) {
			t.Fatalf("%s: hit %d is chunk %d, want %d (score %v)", what, i, got[i].RowID, want[i].rowid, want[i].score)
		}
	}
}

// ftsCorpus writes n generated notes (from note first on), about a third
// personal, each a chunk of words w00…w59 drawn with a Zipf-like skew, so
// that the words' shares of the chunks run from under 1% to over half.
// Every title holds "note", a word in every chunk.
func ftsCorpus(t *testing.T, s *Store, r *rand.Rand, first, n int, extra string) {
	t.Helper()
	var notes []vault.NoteInput
	for i := first; i < first+n; i++ {
		var words []string
		for range 6 + r.IntN(30) {
			words = append(words, fmt.Sprintf("w%02d", int(math.Floor(math.Exp(r.Float64()*math.Log(61))))-1))
		}
		if extra != "" {
			words = append(words, extra)
		}
		dir := "Notes"
		if r.IntN(3) == 0 {
			dir = "Private"
		}
		notes = append(notes, note(fmt.Sprintf("%s/Note %d.md", dir, i), strings.Join(words, " ")+".\n"))
	}
	mustApply(t, s, upserts(notes...))
}

// SearchFTS's passes return what one query over every chunk that holds a
// word returns, on a generated corpus for many questions, both scopes and
// several k, while writes move words' counts across half the chunks (so
// counts kept from before a write would show): against keptRanking, the
// same chunks in the same order with the same scores; against every word,
// the same but for what the words in half the chunks or more add to a
// score (under 1e-5 here) and the order of chunks tied but for that.
func TestSearchFTSPassesRankAsOneQuery(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	r := rand.New(rand.NewPCG(22, 1))
	ftsCorpus(t, s, r, 0, 300, "")
	seen := map[string]int{}
	for round, extra := range []string{"", "pivot", "pivot", ""} {
		if round > 0 {
			ftsCorpus(t, s, r, 300*round, 150, extra)
		}
		for range 60 {
			var words []string
			for range 1 + r.IntN(4) {
				words = append(words, fmt.Sprintf("w%02d", r.IntN(60)))
			}
			switch r.IntN(4) {
			case 0:
				words = append(words, "note")
			case 1:
				words = append(words, "pivot")
			case 2:
				words = append(words, "absent")
			}
			text := strings.Join(words, " ")
			for _, k := range []int{1, 3, 10, 40} {
				for _, scope := range []vault.Scope{vault.ScopeAll, vault.ScopeOpen} {
					what := fmt.Sprintf("round %d, %q, k %d, open %v", round, text, k, scope.OpenOnly())
					got, ran, err := s.searchFTS(ctx, text, k, scope, vault.FieldWeights{})
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					sameRanking(t, what+" over the kept words", got, keptRanking(t, s, text, k, scope, vault.FieldWeights{}), k, 1e-9, 0)
					sameRanking(t, what+" over every word", got, referenceFTS(t, s, ftsWords(text), k+1, scope, vault.FieldWeights{}), k, 1e-5, 0)
					for _, h := range got {
						if scope.OpenOnly() && h.Sensitivity != vault.SensitivityOpen {
							t.Fatalf("%s: open-only search returned %s (%s)", what, h.Path, h.Sensitivity)
						}
					}
					_, floor := keptWords(t, s, ftsWords(text), vault.FieldWeights{})
					if len(ran) > 0 && len(floor) > 0 && ran[len(ran)-1] == `"`+strings.Join(floor, `" OR "`)+`"` {
						seen["floor words after"]++
						ran = ran[:len(ran)-1]
					}
					seen[passKind(ran)]++
				}
			}
		}
	}
	t.Logf("ways to an answer: %v", seen)
	// Each way to an answer was taken, so each was checked above.
	for _, kind := range []string{"one word", "every word", "all essential words", "any essential word", "essential words, then the rest", "after passes, every word", "floor words after"} {
		if seen[kind] == 0 {
			t.Errorf("no question was answered by %s (answered: %v)", kind, seen)
		}
	}
}

// passKind names the way SearchFTS reached its answer, from the passes it
// ran: a pass over every chunk with a word that all are kept ("one word",
// "every word"), the passes of ftsSearch.top that proved their answer over
// the chunks that hold all essential words or any, those that found fewer
// than k and filled the rest from the other words (whose last pass lacks
// the rarest word), or a last pass over every chunk with a word after
// passes that proved nothing.
func passKind(ran []string) string {
	if len(ran) == 0 {
		return "nothing"
	}
	last := ran[len(ran)-1]
	rarest := strings.Fields(strings.TrimLeft(ran[0], "("))[0]
	switch {
	case len(ran) == 1 && !strings.Contains(last, " "):
		return "one word"
	case len(ran) == 1 && strings.Contains(last, " AND "):
		return "all essential words"
	case len(ran) == 1:
		return "every word"
	case !strings.Contains(last, rarest):
		return "essential words, then the rest"
	case !strings.HasPrefix(last, "("):
		return "after passes, every word"
	case strings.Contains(last[:strings.Index(last, ") AND (")], " AND "):
		return "all essential words"
	}
	return "any essential word"
}

// A question of common words (each in most chunks) still finds the note
// its rare words name, and the common words are not searched while the
// rare ones fill k; when they don't, the chunks that hold only common
// words come after, as one query over every word ranks them.
func TestSearchFTSCommonWordsLeftOut(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	var notes []vault.NoteInput
	for i := range 30 {
		notes = append(notes, note(fmt.Sprintf("Notes/Plugin %d.md", i), "An Obsidian plugin for your notes, from the community.\n"))
	}
	notes = append(notes, note("Notes/Sync.md", "# Sync\n\nObsidian Sync resolves conflicts in your notes.\n"))
	mustApply(t, s, upserts(notes...))
	const text = "obsidian notes community sync conflicts"

	hits, ran, err := s.searchFTS(ctx, text, 1, vault.ScopeAll, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Path != "Notes/Sync.md" {
		t.Fatalf("hits %v, want Notes/Sync.md", paths(hits))
	}
	for _, expr := range ran {
		for _, common := range []string{`"obsidian"`, `"notes"`, `"community"`} {
			if strings.Contains(expr, common) {
				t.Errorf("pass %s searches %s, a word in every chunk", expr, common)
			}
		}
	}

	hits, err = s.Search().SearchFTS(ctx, text, 5, vault.ScopeAll, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 || hits[0].Path != "Notes/Sync.md" {
		t.Fatalf("hits %v, want Notes/Sync.md and 4 plugins", paths(hits))
	}
	sameRanking(t, "k 5", hits, referenceFTS(t, s, ftsWords(text), 6, vault.ScopeAll, vault.FieldWeights{}), 5, 1e-5, 0)
}

// A question whose every word is in most chunks still answers, ranked by
// those words.
func TestSearchFTSAllCommonWords(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(
		note("a.md", "Obsidian notes.\n"),
		note("b.md", "Obsidian notes, notes and more notes about Obsidian.\n"),
		note("c.md", "Obsidian.\n"),
	))
	hits, err := s.Search().SearchFTS(ctx, "obsidian notes", 5, vault.ScopeAll, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(hits); len(got) != 3 || got[0] != "b.md" {
		t.Fatalf("hits %v, want all three, b.md first", got)
	}
}

// The scope filters every pass before its limit: with more personal chunks
// than k that outrank every open one, an open-only search still returns k
// open chunks, on each way to an answer.
func TestSearchFTSScopeBeforeK(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	var notes []vault.NoteInput
	for i := range 40 {
		notes = append(notes,
			note(fmt.Sprintf("Private/Star %d.md", i), "quasar quasar pulsar pulsar nebula.\n"),
			note(fmt.Sprintf("Notes/Star %d.md", i), "A quasar and a pulsar, seen far off, past the dust of a nebula.\n"))
	}
	for i := range 120 {
		notes = append(notes, note(fmt.Sprintf("Notes/Sky %d.md", i), "Dust, far off.\n"))
	}
	notes = append(notes, note("Notes/Magnetar.md", "A magnetar.\n"), note("Private/Magnetar.md", "magnetar magnetar.\n"))
	mustApply(t, s, upserts(notes...))
	const k = 5
	for _, text := range []string{"quasar", "quasar pulsar", "quasar pulsar nebula", "magnetar nebula", "magnetar quasar pulsar"} {
		all, _, err := s.searchFTS(ctx, text, k, vault.ScopeAll, vault.FieldWeights{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(all[0].Path, "Private/") {
			t.Fatalf("%q: the whole vault's best is %s, want a personal note: the test proves nothing", text, all[0].Path)
		}
		open, ran, err := s.searchFTS(ctx, text, k, vault.ScopeOpen, vault.FieldWeights{})
		if err != nil {
			t.Fatal(err)
		}
		if len(open) != k {
			t.Fatalf("%q: %d open hits, want %d (passes %q)", text, len(open), k, ran)
		}
		for _, h := range open {
			if h.Sensitivity != vault.SensitivityOpen {
				t.Fatalf("%q: open-only search returned %s (passes %q)", text, h.Path, ran)
			}
		}
		sameRanking(t, text, open, keptRanking(t, s, text, k, vault.ScopeOpen, vault.FieldWeights{}), k, 1e-9, 0)
	}
}

// The counts SearchFTS keeps are those of the index as the search sees
// it: a word that a write puts in most chunks stops being searched, and
// one that a write takes out of them is searched again.
func TestSearchFTSCountsFollowWrites(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{})
	var notes []vault.NoteInput
	for i := range 10 {
		notes = append(notes, note("n"+strconv.Itoa(i)+".md", "Plain words.\n"))
	}
	notes = append(notes, note("drift.md", "Drift and anchor.\n"))
	mustApply(t, s, upserts(notes...))
	searched := func() bool {
		t.Helper()
		_, ran, err := s.searchFTS(ctx, "drift anchor", 1, vault.ScopeAll, vault.FieldWeights{})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ran, func(e string) bool { return strings.Contains(e, `"drift"`) })
	}
	if !searched() {
		t.Fatal(`"drift", in one chunk of 11, is not searched`)
	}
	var drift []vault.NoteInput
	for i := range 10 {
		drift = append(drift, note("n"+strconv.Itoa(i)+".md", "Plain words that drift.\n"))
	}
	mustApply(t, s, upserts(drift...))
	if searched() {
		t.Fatal(`"drift", now in every chunk, is still searched`)
	}
	mustApply(t, s, upserts(notes[:10]...))
	if !searched() {
		t.Fatal(`"drift", in one chunk of 11 again, is not searched`)
	}
}
