package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassifyGlobsAndOverride(t *testing.T) {
	c := Classifier{PersonalPaths: []string{"Tastings/**", "30 projects/**/secret*.md"}}
	for _, tc := range []struct {
		path, override, want string
	}{
		{"Tastings/2024/Barolo.md", "", SensitivityPersonal},
		{"tastings/2024/Barolo.md", "", SensitivityOpen}, // case-sensitive against the real path
		{"30 projects/a/b/secret plan.md", "", SensitivityPersonal},
		{"30 projects/a/b/plan.md", "", SensitivityOpen},
		{"Tastings/Barolo.md", SensitivityOpen, SensitivityOpen},       // frontmatter opens a personal path
		{"Journal/Today.md", SensitivityPersonal, SensitivityPersonal}, // frontmatter closes an open path
		{"Journal/Today.md", "bogus", SensitivityOpen},
	} {
		if got := c.Classify(tc.path, tc.override); got != tc.want {
			t.Errorf("Classify(%q, %q) = %s, want %s", tc.path, tc.override, got, tc.want)
		}
	}
	if err := (Classifier{PersonalPaths: []string{"a/[b"}}).Validate(); err == nil {
		t.Error("Validate accepted a malformed glob")
	}
}

func TestCorpusMatch(t *testing.T) {
	c := Corpus{Include: []string{"**/*.md"}, Exclude: []string{"00 inbox/**", "**/.trash/**"}}
	for path, want := range map[string]bool{
		"Note.md":              true,
		"a/b/Note.md":          true,
		"00 inbox/Draft.md":    false,
		"x/.trash/Old.md":      false,
		"image.png":            false,
		"00 Inbox/Draft.md":    true, // case-sensitive
		"Attachments/x.canvas": false,
	} {
		if got := c.Match(path); got != want {
			t.Errorf("Match(%q) = %v, want %v", path, got, want)
		}
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
	rows, err := s.writer.Query(`SELECT rowid, embedding FROM chunks_vec ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
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

	s = mustOpen(t, Options{Path: path, Sensitivity: Classifier{PersonalPaths: []string{"Tastings/**", "Nothing/**"}}})
	ctx := context.Background()
	dry, err := s.Reclassify(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Tastings/Barolo.md"}, dry.Paths); diff != "" {
		t.Fatalf("dry run (-want +got):\n%s", diff)
	}
	if count(t, s, `SELECT count(*) FROM docs WHERE sensitivity = 'personal'`) != 0 {
		t.Fatal("dry run wrote")
	}
	res, err := s.Reclassify(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Reclassified{Paths: []string{"Tastings/Barolo.md"}, UnmatchedPatterns: []string{"Nothing/**"}}, res); diff != "" {
		t.Fatalf("recompute (-want +got):\n%s", diff)
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
	// The vec0 metadata column moved too: an open-only KNN no longer sees it.
	hits, err := s.SearchVector(ctx, []float32{1, 0, 0, 0}, 10, ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	if contains(paths(hits), "Tastings/Barolo.md") || len(hits) != 2 {
		t.Fatalf("open KNN after recompute = %v", paths(hits))
	}
	if got := count(t, s, `SELECT count(*) FROM chunks_vec WHERE sensitivity = 'personal'`); got != 1 {
		t.Fatalf("vec metadata personal = %d, want 1", got)
	}
}

// More personal candidates than k, all nearer the query than any open one:
// a filter applied after the top-k would return nothing.
func TestOpenScopeFiltersBeforeK(t *testing.T) {
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	var notes []NoteInput
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

	all, err := s.SearchVector(ctx, []float32{1, 0, 0, 0}, k, ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range all {
		if h.Sensitivity != SensitivityPersonal {
			t.Fatalf("ScopeAll top-%d should be all personal, got %v", k, paths(all))
		}
	}
	open, err := s.SearchVector(ctx, []float32{1, 0, 0, 0}, k, ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != k {
		t.Fatalf("ScopeOpen KNN returned %d hits, want %d (filter after k?)", len(open), k)
	}
	for _, h := range open {
		if h.Sensitivity != SensitivityOpen {
			t.Fatalf("ScopeOpen KNN returned personal %s", h.Path)
		}
	}

	ftsAll, err := s.SearchFTS(ctx, "quasar", k, ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range ftsAll {
		if h.Sensitivity != SensitivityPersonal {
			t.Fatalf("ScopeAll FTS top-%d should be all personal, got %v", k, paths(ftsAll))
		}
	}
	ftsOpen, err := s.SearchFTS(ctx, "quasar", k, ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	if len(ftsOpen) != k {
		t.Fatalf("ScopeOpen FTS returned %d hits, want %d", len(ftsOpen), k)
	}
	for _, h := range ftsOpen {
		if h.Sensitivity != SensitivityOpen {
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
			_, err := s.Apply(ctx, upserts(note(fmt.Sprintf("n%03d.md", i), body), NoteInput{Path: "counter.md", Rev: fmt.Sprint(i), Text: fmt.Sprint("count ", i)}))
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
	hits, err := s.SearchFTS(ctx, "Kowalski", 10, ScopeOpen)
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
	if _, err := s.Reclassify(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := str(t, s, `SELECT prelude FROM chunks WHERE doc_id = '20 clippings/custody law.md'`); strings.Contains(got, "topics") {
		t.Fatalf("open member's prelude after reclassifying its topic = %q", got)
	}
	if got := count(t, s, `SELECT embedded FROM chunks WHERE doc_id = '20 clippings/custody law.md'`); got != 0 {
		t.Fatal("a prelude changed but its vector was kept")
	}
}
