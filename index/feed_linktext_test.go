package index

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// linksOnly searches the link text alone.
var linksOnly = vault.FieldWeights{Links: 1}

func search(tb testing.TB, s *Store, text string, scope vault.Scope, w vault.FieldWeights) []string {
	tb.Helper()
	hits, err := s.Search().SearchFTS(context.Background(), text, 20, scope, w)
	if err != nil {
		tb.Fatal(err)
	}
	return slices.Compact(slices.Sorted(slices.Values(paths(hits))))
}

// checkLinkText fails unless every note's stored link text is what it
// would be computed afresh, and the full-text rows of its chunks hold it:
// whatever marked the notes to refresh, none was missed.
func checkLinkText(tb testing.TB, s *Store) {
	tb.Helper()
	ctx := context.Background()
	ids, err := queryAll(ctx, s.db(), one[string], `SELECT doc_id FROM docs ORDER BY doc_id`)
	if err != nil {
		tb.Fatal(err)
	}
	for _, id := range ids {
		want, err := linkText(ctx, s.db(), id)
		if err != nil {
			tb.Fatal(err)
		}
		if got := str(tb, s, `SELECT link_text FROM docs WHERE doc_id = ?`, id); got != want {
			tb.Errorf("%s: stored link text %q, computed %q", id, got, want)
		}
	}
}

// What notes say when they link to a note finds it, through the links
// field only when that field is weighted, and the text follows the linking
// note: edited, deleted, resolved later.
func TestLinkTextFindsTheLinkedNote(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(
		note("People/Liam.md", "# Liam\n\nHis plugins:\n- [[Calendar]]: a month view of your zorblax notes\n"),
		note("Plugins/Calendar.md", "Shows a calendar.\n"),
	))
	checkLinkText(t, s)
	if got := search(t, s, "zorblax", vault.ScopeAll, linksOnly); !slices.Equal(got, []string{"Plugins/Calendar.md"}) {
		t.Fatalf("link text search = %v, want the linked note", got)
	}
	if got := search(t, s, "zorblax", vault.ScopeAll, vault.FieldWeights{Title: 1, Body: 1}); !slices.Equal(got, []string{"People/Liam.md"}) {
		t.Errorf("title and body = %v, want the linking note only", got)
	}
	// The linking note's title is part of what it says.
	if got := search(t, s, "liam", vault.ScopeAll, linksOnly); !slices.Equal(got, []string{"Plugins/Calendar.md"}) {
		t.Errorf("search for the linking note's title in link text = %v", got)
	}

	// The linking note changes its words, then drops the link.
	mustApply(t, s, upserts(note("People/Liam.md", "- [[Calendar]]: a month view of your quuxer notes\n")))
	checkLinkText(t, s)
	if got := search(t, s, "zorblax", vault.ScopeAll, linksOnly); len(got) != 0 {
		t.Errorf("old link words still find %v", got)
	}
	if got := search(t, s, "quuxer", vault.ScopeAll, linksOnly); !slices.Equal(got, []string{"Plugins/Calendar.md"}) {
		t.Errorf("new link words find %v", got)
	}
	mustApply(t, s, upserts(note("People/Liam.md", "No links any more, quuxer.\n")))
	checkLinkText(t, s)
	if got := search(t, s, "quuxer", vault.ScopeAll, linksOnly); len(got) != 0 {
		t.Errorf("a dropped link's words still find %v", got)
	}

	// A link written before its target exists resolves when the target
	// arrives, and the link text goes with it; deleting the linking note
	// takes it away.
	mustApply(t, s, upserts(note("Guides/Start.md", "Read [[Later]] about flimflam.\n")))
	mustApply(t, s, upserts(note("Later.md", "Arrives later.\n")))
	checkLinkText(t, s)
	if got := search(t, s, "flimflam", vault.ScopeAll, linksOnly); !slices.Equal(got, []string{"Later.md"}) {
		t.Errorf("link text of a late target = %v", got)
	}
	mustApply(t, s, Batch{Deletes: []string{"Guides/Start.md"}})
	checkLinkText(t, s)
	if got := search(t, s, "flimflam", vault.ScopeAll, linksOnly); len(got) != 0 {
		t.Errorf("a deleted note's link words still find %v", got)
	}
}

// The one rule: a personal note's words are never searchable in an open
// chunk, not through link text either, whatever the scope, and they leave
// an open note's link text as soon as the linking note turns personal, by
// its frontmatter or by reclassification.
func TestPersonalLinkTextNeverInOpenNotes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(
		note("Journal/Diary.md", "---\nsensitivity: personal\n---\nMet [[Dentist]] about my cracked molar.\n"),
		note("Notes/Dentist.md", "Opening hours of the practice.\n"),
		note("Notes/Index.md", "- [[Dentist]]: the practice on Elm street\n"),
		note("Journal/Secret.md", "---\nsensitivity: personal\n---\nPrivate.\n"),
	))
	checkLinkText(t, s)
	for _, scope := range []vault.Scope{vault.ScopeAll, vault.ScopeOpen} {
		if got := search(t, s, "molar", scope, linksOnly); len(got) != 0 {
			t.Errorf("scope %d: a personal note's link words find %v", scope, got)
		}
	}
	if got := search(t, s, "elm", vault.ScopeOpen, linksOnly); !slices.Equal(got, []string{"Notes/Dentist.md"}) {
		t.Errorf("an open note's link words = %v, want the open target", got)
	}

	// The open index note turns personal by its frontmatter.
	mustApply(t, s, upserts(note("Notes/Index.md", "---\nsensitivity: personal\n---\n- [[Dentist]]: the practice on Elm street\n")))
	checkLinkText(t, s)
	for _, scope := range []vault.Scope{vault.ScopeAll, vault.ScopeOpen} {
		if got := search(t, s, "elm", scope, linksOnly); len(got) != 0 {
			t.Errorf("scope %d: link words of a note turned personal find %v", scope, got)
		}
	}

	// Back to open, then personal by a glob: reclassification, no note
	// rewritten.
	mustApply(t, s, upserts(note("Notes/Index.md", "- [[Dentist]]: the practice on Elm street\n")))
	if got := search(t, s, "elm", vault.ScopeOpen, linksOnly); len(got) != 1 {
		t.Fatalf("link words of the open index note = %v", got)
	}
	s.Close()
	s = mustOpen(t, Options{Path: path, Sensitivity: Classifier{PersonalPaths: []string{"Notes/Index.md"}}})
	checkLinkText(t, s)
	for _, scope := range []vault.Scope{vault.ScopeAll, vault.ScopeOpen} {
		if got := search(t, s, "elm", scope, linksOnly); len(got) != 0 {
			t.Errorf("scope %d: link words of a note reclassified personal find %v", scope, got)
		}
	}

	// A personal target may carry personal words: only requests that see
	// every note see it. Reclassified open again, it loses them.
	s.Close()
	s = mustOpen(t, Options{Path: path, Sensitivity: Classifier{PersonalPaths: []string{"Notes/Dentist.md"}}})
	checkLinkText(t, s)
	if got := search(t, s, "molar", vault.ScopeAll, linksOnly); !slices.Equal(got, []string{"Notes/Dentist.md"}) {
		t.Errorf("a personal target's link text from a personal note = %v", got)
	}
	if got := search(t, s, "molar", vault.ScopeOpen, vault.FieldWeights{Title: 1, Body: 1, Links: 1}); len(got) != 0 {
		t.Errorf("open search finds %v", got)
	}
	s.Close()
	s = mustOpen(t, Options{Path: path})
	checkLinkText(t, s)
	if got := search(t, s, "molar", vault.ScopeAll, linksOnly); len(got) != 0 {
		t.Errorf("a target reclassified open keeps personal link words: %v", got)
	}
}

// An index whose links were written without their contexts gets them at
// open, from the notes' texts, without re-embedding anything.
func TestLinkTextBackfill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(
		note("A.md", "See [[B]] for gizmo repairs.\n"),
		note("B.md", "Repairs.\n"),
	))
	embedAll(t, s, func(string) []float32 { return []float32{1, 0, 0, 0} })
	for _, q := range []string{`UPDATE edges SET context = ''`, `UPDATE docs SET link_text = ''`, `DELETE FROM meta WHERE key = 'link_text'`} {
		if _, err := s.writer.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if got := search(t, s, "gizmo", vault.ScopeAll, linksOnly); len(got) != 0 {
		t.Fatalf("before the backfill: %v", got)
	}
	s.Close()
	s = mustOpen(t, Options{Path: path})
	checkLinkText(t, s)
	if got := search(t, s, "gizmo", vault.ScopeAll, linksOnly); !slices.Equal(got, []string{"B.md"}) {
		t.Errorf("after the backfill: %v", got)
	}
	if n := count(t, s, `SELECT count(*) FROM chunks WHERE embedded = 0`); n != 0 {
		t.Errorf("the backfill put %d chunks back on the embedding backlog", n)
	}
}

// Link text is bounded, and a note linking twice says its words once.
func TestLinkTextBounded(t *testing.T) {
	s := mustOpen(t, Options{})
	var notes []vault.NoteInput
	for i := range 200 {
		notes = append(notes, note("Roundup/"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strings.Repeat("y", i/26)+".md",
			"- [[Popular]] is mentioned again, with some words around it\n- [[Popular]] twice\n"))
	}
	notes = append(notes, note("Popular.md", "Everyone links here.\n"))
	mustApply(t, s, upserts(notes...))
	checkLinkText(t, s)
	got := str(t, s, `SELECT link_text FROM docs WHERE doc_id = 'popular.md'`)
	if len(got) > linkTextBytes || len(got) < linkTextBytes/2 || !strings.HasSuffix(got, "\n") {
		t.Errorf("link text of a popular note: %d bytes, want at most %d, cut after a whole context", len(got), linkTextBytes)
	}
	seen := map[string]bool{}
	for line := range strings.Lines(got) {
		if seen[line] {
			t.Errorf("link text repeats %q", line)
		}
		seen[line] = true
	}
}

// A zero weight leaves its field out of the search; the fields are the
// note's title, aliases, headings, path, topics, body and link text.
func TestFieldWeights(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(
		note("Plants/Ficus.md", "---\naliases: [weeping fig]\n---\n# Ficus\n\n"+strings.Repeat("A houseplant from the tropics. ", 30)+"\n\n## Care schedule\n\n"+strings.Repeat("Once a week, more in summer. ", 40)+"\n"),
		note("Plants/Other.md", "A note about watering and a weeping willow, and a ficus.\n"),
	))
	for _, tt := range []struct {
		text string
		w    vault.FieldWeights
		want []string
	}{
		{"weeping", vault.FieldWeights{Aliases: 1}, []string{"Plants/Ficus.md"}},
		{"weeping", vault.FieldWeights{Body: 1}, []string{"Plants/Other.md"}},
		{"care", vault.FieldWeights{Headings: 1}, []string{"Plants/Ficus.md"}},
		{"plants", vault.FieldWeights{Path: 1}, []string{"Plants/Ficus.md", "Plants/Other.md"}},
		{"plants", vault.FieldWeights{Title: 1, Body: 1}, nil},
		{"ficus", vault.FieldWeights{Title: 1}, []string{"Plants/Ficus.md"}},
	} {
		if got := search(t, s, tt.text, vault.ScopeAll, tt.w); !slices.Equal(got, tt.want) {
			t.Errorf("%q with %+v = %v, want %v", tt.text, tt.w, got, tt.want)
		}
	}
	// A title match outweighs a body match when the title weighs more.
	hits, err := s.Search().SearchFTS(context.Background(), "ficus", 5, vault.ScopeAll, vault.FieldWeights{Title: 10, Body: 1})
	if err != nil || len(hits) < 2 || hits[0].Path != "Plants/Ficus.md" {
		t.Errorf("title-weighted ficus = %v, %v", paths(hits), err)
	}
}

// syncVault is a vault of more than two sync batches whose notes link
// forwards and backwards across batches: each note's link to the note two
// batches on, and the last batch's notes to the first's.
func syncVault() []vault.NoteInput {
	n := 2*syncBatch + 50
	name := func(i int) string { return fmt.Sprintf("N%04d", (i+n)%n) }
	var notes []vault.NoteInput
	for i := range n {
		notes = append(notes, note(name(i)+".md", fmt.Sprintf("# %s\n\nSee [[%s]] about quux%d repairs.\n", name(i), name(i+syncBatch+20), i)))
	}
	return notes
}

// A sync of many batches refreshes each note's link text once, at its end,
// to what one batch would have given it: every note linked from another
// batch carries what that note says.
func TestSyncRefreshesLinkTextAtItsEnd(t *testing.T) {
	s := mustOpen(t, Options{})
	ctx := context.Background()
	listing := syncVault()
	plan, err := s.Feed().Plan(ctx, listing)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Feed().Sync(ctx, listing, plan, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	checkLinkText(t, s)
	if n := count(t, s, `SELECT count(*) FROM docs WHERE link_text = ''`); n != 0 {
		t.Errorf("%d notes without link text, want every note linked", n)
	}
	if got := search(t, s, "quux3", vault.ScopeAll, linksOnly); !slices.Equal(got, []string{"N0223.md"}) {
		t.Errorf("link text search for what N0003 says = %v, want N0223.md, in a later batch", got)
	}
	if v, done, err := getMeta(ctx, s.writer, linkTextMeta); err != nil || !done || v != "1" {
		t.Errorf("link text meta after the sync: %q %v %v, want done", v, done, err)
	}
	// The same listing again changes nothing: the link text stays done.
	if plan, err = s.Feed().Plan(ctx, listing); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Feed().Sync(ctx, listing, plan, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, done, err := getMeta(ctx, s.writer, linkTextMeta); err != nil || !done || v != "1" {
		t.Errorf("link text meta after an unchanged sync: %q %v %v, want done", v, done, err)
	}
	checkLinkText(t, s)
}

// A sync cut short between its batches leaves link text to be made good:
// the next open of the index computes it.
func TestSyncCutShortLeavesLinkTextToTheNextOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	ctx, cancel := context.WithCancel(context.Background())
	listing := syncVault()
	plan, err := s.Feed().Plan(ctx, listing)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Feed().Sync(ctx, listing, plan, SyncOptions{Progress: func(done, _ int) {
		if done >= 2*syncBatch {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("sync cut short: %v, want context.Canceled", err)
	}
	if _, done, err := getMeta(context.Background(), s.writer, linkTextMeta); err != nil || done {
		t.Fatalf("link text meta after a cut-short sync: done=%v %v, want not done", done, err)
	}
	s.Close()
	s = mustOpen(t, Options{Path: path})
	checkLinkText(t, s)
	if n := count(t, s, `SELECT count(*) FROM docs WHERE link_text != ''`); n == 0 {
		t.Error("no note has link text after the reopen")
	}
}
