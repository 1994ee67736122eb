package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vaultask/vaultask/vault"
)

func TestClassifyGlobsAndOverride(t *testing.T) {
	c := Classifier{PersonalPaths: []string{"Tastings/**", "30 projects/**/secret*.md"}}
	for _, tc := range []struct {
		path, override, want string
	}{
		{"Tastings/2024/Barolo.md", "", vault.SensitivityPersonal},
		{"tastings/2024/Barolo.md", "", vault.SensitivityOpen}, // case-sensitive against the real path
		{"30 projects/a/b/secret plan.md", "", vault.SensitivityPersonal},
		{"30 projects/a/b/plan.md", "", vault.SensitivityOpen},
		{"Tastings/Barolo.md", vault.SensitivityOpen, vault.SensitivityOpen},       // frontmatter opens a personal path
		{"Journal/Today.md", vault.SensitivityPersonal, vault.SensitivityPersonal}, // frontmatter closes an open path
		{"Journal/Today.md", "bogus", vault.SensitivityOpen},
	} {
		if got := c.classify(tc.path, tc.override); got != tc.want {
			t.Errorf("Classify(%q, %q) = %s, want %s", tc.path, tc.override, got, tc.want)
		}
	}
	if err := (Classifier{PersonalPaths: []string{"a/[b"}}).Validate(); err == nil {
		t.Error("Validate accepted a malformed glob")
	}
}

func TestFrontmatterOverrideWhenIndexing(t *testing.T) {
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	mustApply(t, s, upserts(
		note("Private/Public recipe.md", "---\nsensitivity: open\n---\nshared"),
		note("Blog/Draft.md", "---\nsensitivity: personal\n---\nhidden"),
		note("Private/Diary.md", "diary"),
		note("Blog/Post.md", "post"),
	))
	got := map[string]string{}
	rows, err := s.writer.Query(`SELECT d.path, d.sensitivity || '/' || c.sensitivity FROM docs d JOIN chunks c USING (doc_id)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p, v string
		if err := rows.Scan(&p, &v); err != nil {
			t.Fatal(err)
		}
		got[p] = v
	}
	want := map[string]string{
		"Private/Public recipe.md": "open/open",
		"Blog/Draft.md":            "personal/personal",
		"Private/Diary.md":         "personal/personal",
		"Blog/Post.md":             "open/open",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("sensitivity (-want +got):\n%s", diff)
	}
}

// vectorDigest hashes every stored vector, so a test can prove a recompute
// left the vectors themselves alone.
func vectorDigest(t *testing.T, s *Store) (int, string) {
	t.Helper()
	rows, err := s.writer.Query(`SELECT chunk, embedding FROM vectors ORDER BY space, chunk`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	return digestRows(t, rows)
}

// digestRows hashes rows of a chunk id and its vector.
func digestRows(t *testing.T, rows *sql.Rows) (int, string) {
	t.Helper()
	h := sha256.New()
	n := 0
	for rows.Next() {
		var id int64
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%d:", id)
		h.Write(blob)
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n, hex.EncodeToString(h.Sum(nil))
}

func TestRecomputeTouchesNoVector(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(
		note("Tastings/Barolo.md", "Barolo tasting notes, tar and roses."),
		note("Tastings/Override.md", "---\nsensitivity: open\n---\nBarolo shared notes."),
		note("Recipes/Risotto.md", "Risotto with Barolo."),
	))
	embedAll(t, s, func(string) []float32 { return []float32{1, 0, 0, 0} })
	nBefore, digestBefore := vectorDigest(t, s)
	chunkIDs := str(t, s, `SELECT group_concat(chunk_id) FROM chunks`)
	s.Close()

	settings := Classifier{PersonalPaths: []string{"Tastings/**", "Nothing/**"}}
	ctx := context.Background()
	// A dry run reads the index as it was classified and reports the change.
	ro := mustOpen(t, Options{Path: path, Sensitivity: settings, ReadOnly: true, AsClassified: true})
	dry, err := ro.Feed().Reclassify(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Tastings/Barolo.md"}, dry.Paths); diff != "" {
		t.Fatalf("dry run (-want +got):\n%s", diff)
	}
	if count(t, ro, `SELECT count(*) FROM docs WHERE sensitivity = 'personal'`) != 0 {
		t.Fatal("dry run wrote")
	}
	ro.Close()
	// Opening the index with the new settings reclassifies it.
	var logs strings.Builder
	s = mustOpen(t, Options{Path: path, Sensitivity: settings, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if !strings.Contains(logs.String(), "reclassified it before use") || !strings.Contains(logs.String(), "changed=1") {
		t.Fatalf("no log of the reclassification at open:\n%s", logs.String())
	}
	res, err := s.Feed().Reclassify(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Reclassified{UnmatchedPatterns: []string{"Nothing/**"}}, res); diff != "" {
		t.Fatalf("reclassify after the open (-want +got):\n%s", diff)
	}
	nAfter, digestAfter := vectorDigest(t, s)
	if nAfter != nBefore || digestAfter != digestBefore {
		t.Fatalf("vectors changed: %d %s -> %d %s", nBefore, digestBefore, nAfter, digestAfter)
	}
	if got := str(t, s, `SELECT group_concat(chunk_id) FROM chunks`); got != chunkIDs {
		t.Fatal("recompute re-chunked")
	}
	if got := count(t, s, `SELECT count(*) FROM chunks WHERE sensitivity = 'personal'`); got != 1 {
		t.Fatalf("personal chunks = %d, want 1", got)
	}
	// The vector set follows: an open-only KNN no longer sees it.
	hits, err := s.Search().SearchVector(ctx, s.queryOf([]float32{1, 0, 0, 0}), 10, vault.ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	if contains(paths(hits), "Tastings/Barolo.md") || len(hits) != 2 {
		t.Fatalf("open KNN after recompute = %v", paths(hits))
	}
}

// More personal candidates than k, all nearer the query than any open one:
// a filter applied after the top-k would return nothing.
func TestOpenScopeFiltersBeforeK(t *testing.T) {
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	var notes []vault.NoteInput
	for i := 0; i < 30; i++ {
		notes = append(notes, note(fmt.Sprintf("Private/p%02d.md", i), "quasar quasar quasar quasar personal"))
	}
	for i := 0; i < 5; i++ {
		notes = append(notes, note(fmt.Sprintf("SensitivityOpen/o%02d.md", i), "quasar and a lot of other unrelated words to dilute the score "+fmt.Sprint(i)))
	}
	mustApply(t, s, upserts(notes...))
	embedAll(t, s, func(text string) []float32 {
		if strings.HasSuffix(text, "personal") {
			return []float32{1, 0, 0, 0}
		}
		return []float32{0.2, 1, 0, 0}
	})
	ctx := context.Background()
	const k = 5

	// Brute force, then the shortlist, which rescores 2k candidates: the
	// scope must apply to the scan, before those are taken.
	mustShortlist(t, s)
	for name, search := range map[string]func(context.Context, vault.QueryVector, int, vault.Scope) ([]vault.Chunk, error){
		"SearchVectorExact": s.Search().SearchVectorExact, "SearchVector": s.Search().SearchVector} {
		all, err := search(ctx, s.queryOf([]float32{1, 0, 0, 0}), k, vault.ScopeAll)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != k {
			t.Fatalf("%s: ScopeAll returned %d hits, want %d personal ones: the test proves nothing", name, len(all), k)
		}
		for _, h := range all {
			if h.Sensitivity != vault.SensitivityPersonal {
				t.Fatalf("%s: ScopeAll top-%d should be all personal, got %v", name, k, paths(all))
			}
		}
		open, err := search(ctx, s.queryOf([]float32{1, 0, 0, 0}), k, vault.ScopeOpen)
		if err != nil {
			t.Fatal(err)
		}
		if len(open) != k {
			t.Fatalf("%s: ScopeOpen KNN returned %d hits, want %d (filter after k?)", name, len(open), k)
		}
		for _, h := range open {
			if h.Sensitivity != vault.SensitivityOpen {
				t.Fatalf("%s: ScopeOpen KNN returned personal %s", name, h.Path)
			}
		}
	}

	ftsAll, err := s.Search().SearchFTS(ctx, "quasar", k, vault.ScopeAll, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ftsAll) != k {
		t.Fatalf("ScopeAll FTS returned %d hits, want %d personal ones: the test proves nothing", len(ftsAll), k)
	}
	for _, h := range ftsAll {
		if h.Sensitivity != vault.SensitivityPersonal {
			t.Fatalf("ScopeAll FTS top-%d should be all personal, got %v", k, paths(ftsAll))
		}
	}
	ftsOpen, err := s.Search().SearchFTS(ctx, "quasar", k, vault.ScopeOpen, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ftsOpen) != k {
		t.Fatalf("ScopeOpen FTS returned %d hits, want %d", len(ftsOpen), k)
	}
	for _, h := range ftsOpen {
		if h.Sensitivity != vault.SensitivityOpen {
			t.Fatalf("ScopeOpen FTS returned personal %s", h.Path)
		}
	}
}

// A reader in a transaction sees one snapshot while the writer commits
// batches; every snapshot it sees is a whole batch, never part of one.
func TestReaderSeesConsistentSnapshot(t *testing.T) {
	s := mustOpen(t, Options{})
	ctx := context.Background()
	const batches = 40
	var wg sync.WaitGroup
	wg.Add(1)
	errc := make(chan error, 1)
	go func() {
		defer wg.Done()
		for i := 0; i < batches; i++ {
			// Each batch adds one note with exactly three chunks and rewrites
			// a counter note, so chunks = 3*(notes-1) + 1 in every snapshot.
			body := fmt.Sprintf("## One\n\n%s\n\n## Two\n\n%s\n\n## Three\n\n%s\n", filler(i, 1), filler(i, 2), filler(i, 3))
			_, err := s.Feed().Apply(ctx, upserts(note(fmt.Sprintf("n%03d.md", i), body), vault.NoteInput{Path: "counter.md", Rev: fmt.Sprint(i), Text: fmt.Sprint("count ", i)}))
			if err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	checks := 0
	done := false
	for !done {
		select {
		case err := <-errc:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
		}
		tx, err := s.reader.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var notes, chunks, again int
		if err := tx.QueryRow(`SELECT count(*) FROM docs`).Scan(&notes); err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRow(`SELECT count(*) FROM chunks`).Scan(&chunks); err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRow(`SELECT count(*) FROM docs`).Scan(&again); err != nil {
			t.Fatal(err)
		}
		tx.Rollback()
		if again != notes {
			t.Fatalf("snapshot moved inside a transaction: %d then %d notes", notes, again)
		}
		if notes > 0 && chunks != 3*(notes-1)+1 {
			t.Fatalf("torn snapshot: %d notes, %d chunks", notes, chunks)
		}
		checks++
	}
	wg.Wait()
	if checks < 2 {
		t.Fatalf("reader ran only %d checks", checks)
	}
	if got := count(t, s, `SELECT count(*) FROM docs`); got != batches+1 {
		t.Fatalf("notes = %d, want %d", got, batches+1)
	}
}

// filler is a section body large enough (> the runt threshold) to stay its own chunk.
func filler(i, j int) string {
	var b []byte
	for w := 0; w < 120; w++ {
		b = fmt.Appendf(b, "word%d_%d_%d ", i, j, w)
	}
	return string(b)
}

// A topic note's title is carried in the preludes of the notes it clips,
// which are searched and embedded: an open note may carry only open topic
// notes, or a personal topic's title would find it for a request that sees
// open notes only. When a topic note turns personal, its members' preludes
// lose it.
func TestPersonalTopicTitleStaysOutOfOpenChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path, Sensitivity: Classifier{PersonalPaths: []string{"99 topics/Divorce*"}}})
	ctx := context.Background()
	mustApply(t, s, upserts(
		note("20 clippings/Custody law.md", "How courts decide on shared custody.\n"),
		note("Journal/Mood.md", "---\nsensitivity: personal\n---\nA personal note.\n"),
		note("99 topics/Divorce lawyer Kowalski.md", "<!-- begin:clippings -->\n[[Custody law]]\n[[Mood]]\n<!-- end:clippings -->\n"),
		note("99 topics/Family law.md", "<!-- begin:clippings -->\n[[Custody law]]\n<!-- end:clippings -->\n"),
	))
	if got := str(t, s, `SELECT prelude FROM chunks WHERE doc_id = '20 clippings/custody law.md'`); strings.Contains(got, "Kowalski") || !strings.Contains(got, "topics: Family law") {
		t.Fatalf("open member's prelude = %q, want the open topic only", got)
	}
	if got := str(t, s, `SELECT prelude FROM chunks WHERE doc_id = 'journal/mood.md'`); !strings.Contains(got, "topics: Divorce lawyer Kowalski") {
		t.Fatalf("personal member's prelude = %q, want its personal topic", got)
	}
	hits, err := s.Search().SearchFTS(ctx, "Kowalski", 10, vault.ScopeOpen, vault.FieldWeights{})
	if err != nil || len(hits) != 0 {
		t.Fatalf("open search for the personal topic's title = %v, %v; want nothing", paths(hits), err)
	}

	// The open topic turns personal: its title leaves the open member.
	mustApply(t, s, upserts(note("99 topics/Family law.md", "---\nsensitivity: personal\n---\n<!-- begin:clippings -->\n[[Custody law]]\n<!-- end:clippings -->\n")))
	if got := str(t, s, `SELECT prelude FROM chunks WHERE doc_id = '20 clippings/custody law.md'`); strings.Contains(got, "topics") {
		t.Fatalf("open member's prelude after its topic turned personal = %q", got)
	}
	// And by reclassification, without any note changing.
	mustApply(t, s, upserts(note("99 topics/Family law.md", "<!-- begin:clippings -->\n[[Custody law]]\n<!-- end:clippings -->\n")))
	s.Close()
	s = mustOpen(t, Options{Path: path, Sensitivity: Classifier{PersonalPaths: []string{"99 topics/**"}}})
	if _, err := s.Feed().Reclassify(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := str(t, s, `SELECT prelude FROM chunks WHERE doc_id = '20 clippings/custody law.md'`); strings.Contains(got, "topics") {
		t.Fatalf("open member's prelude after reclassifying its topic = %q", got)
	}
	if got := count(t, s, `SELECT embedded FROM chunks WHERE doc_id = '20 clippings/custody law.md'`); got != 0 {
		t.Fatal("a prelude changed but its vector was kept")
	}
}

// A malformed frontmatter override fails closed in the index: the note is
// personal, an open-scope search does not see it, the log says which note
// and why, and its status says so.
func TestMalformedOverrideFailsClosed(t *testing.T) {
	var logs strings.Builder
	s := mustOpen(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	mustApply(t, s, upserts(
		note("Notes/Spelled.md", "---\nSensitivity: open\n---\nGardening plans for the allotment.\n"),
		note("Notes/Listed.md", "---\nsensitivity: [open]\n---\nGardening with a list value.\n"),
		note("Notes/Clean.md", "---\nsensitivity: open\n---\nGardening in the open.\n"),
	))
	hits, err := s.Search().SearchFTS(ctx, "gardening", 10, vault.ScopeOpen, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Notes/Clean.md"}, paths(hits)); diff != "" {
		t.Errorf("open search (-want +got):\n%s", diff)
	}
	for _, p := range []string{"Notes/Spelled.md", "Notes/Listed.md"} {
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "path="+p) {
			t.Errorf("no warning naming %s:\n%s", p, logs.String())
		}
	}
	entries, _, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll, Path: "Spelled"})
	if err != nil || len(entries) != 1 || entries[0].Sensitivity != vault.SensitivityPersonal || !strings.Contains(entries[0].Reason, "treated as personal") {
		t.Errorf("status of the misspelt override: %+v, %v", entries, err)
	}
}

// A note whose markdown the parser cannot handle in bounded time is indexed
// as plain text, its words still found, and its status says why.
func TestHostileNoteIndexedAsPlainText(t *testing.T) {
	s := mustOpen(t, Options{})
	ctx := context.Background()
	mustApply(t, s, upserts(note("Hostile.md", "Before the storm [[Target]].\n\n"+strings.Repeat(">", 100_000)+" quoted\n")))
	hits, err := s.Search().SearchFTS(ctx, "storm", 5, vault.ScopeAll, vault.FieldWeights{})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search in the hostile note: %v, %v", paths(hits), err)
	}
	entries, _, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll, Path: "Hostile"})
	if err != nil || len(entries) != 1 || !strings.Contains(entries[0].Reason, "indexed as plain text") {
		t.Fatalf("status of the hostile note: %+v, %v", entries, err)
	}
	if n := count(t, s, `SELECT count(*) FROM edges WHERE src = 'hostile.md' AND target = 'target'`); n != 1 {
		t.Errorf("the plain-text note's wikilink: %d edges, want 1", n)
	}
}

// Changed sensitivity settings apply as soon as any process opens the
// index with them, before it answers: a writer reclassifies at open, a
// reader through a writer of its own, and a reader that cannot (another
// process writes under the old settings) refuses rather than answer with a
// now-personal note.
func TestNewSettingsApplyBeforeAnyAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	ctx := context.Background()
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(
		note("Health/Knee.md", "Knee exercises: squats and lunges.\n"),
		note("Notes/Exercise.md", "---\nvisibility: personal\n---\nExercises for the back.\n"),
		note("Notes/Public.md", "Exercises anyone may read about.\n"),
	))
	s.Close()
	openHits := func(s *Store) []string {
		t.Helper()
		hits, err := s.Search().SearchFTS(ctx, "exercises", 10, vault.ScopeOpen, vault.FieldWeights{})
		if err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(slices.Values(paths(hits)))
	}

	// A reader with a new personal glob and another frontmatter key.
	settings := Options{Path: path, Sensitivity: Classifier{PersonalPaths: []string{"Health/**"}}, FrontmatterKey: "visibility", ReadOnly: true}
	r := mustOpen(t, settings)
	if diff := cmp.Diff([]string{"Notes/Public.md"}, openHits(r)); diff != "" {
		t.Errorf("open search by a reader with the new settings (-want +got):\n%s", diff)
	}
	r.Close()

	// Back to the old settings, but a writer holds the index under the new
	// ones: a reader with the old cannot reclassify, and says so.
	w := mustOpen(t, Options{Path: path, Sensitivity: Classifier{PersonalPaths: []string{"Health/**"}}, FrontmatterKey: "visibility"})
	_, err := Open(ctx, Options{Path: path, Space: testSpace, ReadOnly: true})
	if !errors.Is(err, errClassificationStale) || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("reader with other settings beside a writer: %v, want errClassificationStale", err)
	}
	if diff := cmp.Diff([]string{"Notes/Public.md"}, openHits(w)); diff != "" {
		t.Errorf("the writer's open search (-want +got):\n%s", diff)
	}
	w.Close()

	// The old settings again: every note is open again.
	s = mustOpen(t, Options{Path: path})
	if diff := cmp.Diff([]string{"Health/Knee.md", "Notes/Exercise.md", "Notes/Public.md"}, openHits(s)); diff != "" {
		t.Errorf("open search after the settings went back (-want +got):\n%s", diff)
	}
}

// Frontmatter that Obsidian reads as text — never closed, closed with
// "...", after a blank line, with an indented or a longer dash line — sets
// nothing, so the note stays open, as Obsidian shows it; but the log warns,
// naming the note, once per indexing of it, and /status/notes gives the
// reason. A note that merely starts with a rule, or whose would-be block
// does not mention the key, is not warned about.
func TestIgnoredFrontmatterOverrideWarns(t *testing.T) {
	var logs strings.Builder
	s := mustOpen(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	ignored := map[string]string{
		"Notes/Unclosed.md": "has no closing '---' line",
		"Notes/Dotted.md":   "is closed with '...'",
		"Notes/Blank.md":    "starts after a blank line",
		"Notes/Indented.md": "opens with an indented",
		"Notes/Fences.md":   "instead of '---'",
	}
	mustApply(t, s, upserts(
		note("Notes/Unclosed.md", "---\nsensitivity: personal\ntitle: Plans\n\nOrchard plans for the spring.\n"),
		note("Notes/Dotted.md", "---\nSensitivity: personal\n...\nOrchard plans, dotted.\n"),
		note("Notes/Blank.md", "\n---\nsensitivity: personal\n---\nOrchard plans after a blank line.\n"),
		note("Notes/Indented.md", " ---\nsensitivity: personal\n ---\nOrchard plans, indented.\n"),
		note("Notes/Fences.md", "----\nsensitivity: personal\n----\nOrchard plans in longer fences.\n"),
		note("Notes/Rule.md", "---\nOrchard plans under a rule; sensitivity: is discussed here.\n"),
		note("Notes/After.md", "---\ntitle: x\n...\nsensitivity: personal\nOrchard plans after the block.\n"),
	))
	hits, err := s.Search().SearchFTS(ctx, "orchard", 10, vault.ScopeOpen, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 7 {
		t.Errorf("open search found %v, want all seven notes open", paths(hits))
	}
	for p, why := range ignored {
		n := 0
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, "Obsidian reads the note's frontmatter as text") && strings.Contains(line, " path="+p+" ") && strings.Contains(line, why) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d warnings naming %s and saying %q, want 1:\n%s", n, p, why, logs.String())
		}
	}
	listed, _, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeOpen, Path: "Notes/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 7 {
		t.Fatalf("/status/notes lists %d of the seven open notes", len(listed))
	}
	for _, e := range listed {
		why, isIgnored := ignored[e.Path]
		if isIgnored != strings.Contains(e.Reason, "is ignored") || !strings.Contains(e.Reason, why) || e.Sensitivity != vault.SensitivityOpen {
			t.Errorf("/status/notes lists %s as %s with the reason %q; want open, the reason saying %q", e.Path, e.Sensitivity, e.Reason, why)
		}
	}
	for _, p := range []string{"Notes/Rule.md", "Notes/After.md"} {
		if strings.Contains(logs.String(), "path="+p) {
			t.Errorf("a warning names %s, whose frontmatter-like text does not set the key:\n%s", p, logs.String())
		}
	}
}

// A new frontmatter key reads every note's ignored override again: the
// reason /status/notes gives follows the key.
func TestIgnoredOverrideFollowsTheKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(
		note("Notes/Blank.md", "\n---\nvisibility: personal\n---\nOrchard plans.\n"),
		note("Notes/Fences.md", "----\nsensitivity: personal\n----\nOrchard plans.\n"),
	))
	s.Close()
	s = mustOpen(t, Options{Path: path, FrontmatterKey: "visibility"})
	listed, _, err := s.Browse().NoteList(context.Background(), vault.NoteQuery{Scope: vault.ScopeAll})
	if err != nil || len(listed) != 2 {
		t.Fatalf("NoteList = %d notes, %v; want both", len(listed), err)
	}
	reasons := map[string]string{}
	for _, e := range listed {
		reasons[e.Path] = e.Reason
	}
	if !strings.Contains(reasons["Notes/Blank.md"], `its "visibility" is ignored`) || reasons["Notes/Fences.md"] != "" {
		t.Errorf("reasons under the key visibility: %q", reasons)
	}
}

// Apply reports each note it wrote with its sensitivity, and for a changed
// one the sensitivity it had before: what tells a view of open notes only
// that a note came into it or left it.
func TestApplyReportsScopeChanges(t *testing.T) {
	s := mustOpen(t, Options{})
	open, personal := "# Risotto\n\nStir the stock in.\n", "---\nsensitivity: personal\n---\n# Risotto\n\nLess salt.\n"
	for _, step := range []struct {
		batch Batch
		want  []NoteChange
	}{
		{upserts(note("Risotto.md", open)), []NoteChange{{Change: ChangeAdded, Path: "Risotto.md", Title: "Risotto", Sensitivity: vault.SensitivityOpen}}},
		{upserts(note("Risotto.md", personal)), []NoteChange{{Change: ChangeChanged, Path: "Risotto.md", Title: "Risotto", Sensitivity: vault.SensitivityPersonal, WasSensitivity: vault.SensitivityOpen}}},
		{upserts(note("Risotto.md", personal+"More.\n")), []NoteChange{{Change: ChangeChanged, Path: "Risotto.md", Title: "Risotto", Sensitivity: vault.SensitivityPersonal, WasSensitivity: vault.SensitivityPersonal}}},
		{upserts(note("Risotto.md", open)), []NoteChange{{Change: ChangeChanged, Path: "Risotto.md", Title: "Risotto", Sensitivity: vault.SensitivityOpen, WasSensitivity: vault.SensitivityPersonal}}},
		{Batch{Deletes: []string{"Risotto.md"}}, []NoteChange{{Change: ChangeRemoved, Path: "Risotto.md", Title: "Risotto", Sensitivity: vault.SensitivityOpen}}},
	} {
		if diff := cmp.Diff(step.want, mustApply(t, s, step.batch).Notes); diff != "" {
			t.Errorf("notes written (-want +got):\n%s", diff)
		}
	}
}
