package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vaultask/vaultask/vault"
)

func TestApplyIndexesNoteForFTS(t *testing.T) {
	s := mustOpen(t, Options{})
	res := mustApply(t, s, upserts(
		note("Recipes/Bread.md", "# Bread\n\nKnead the dough for ten minutes, then let it rise.\n"),
		note("Travel/Kyoto.md", "# Kyoto\n\nTemples and gardens in autumn.\n"),
	))
	if res.Added != 2 {
		t.Fatalf("Added = %d, want 2", res.Added)
	}
	hits, err := s.Search().SearchFTS(context.Background(), "dough rising", 5, vault.ScopeAll, vault.FieldWeights{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Recipes/Bread.md"}, paths(hits)); diff != "" {
		t.Fatalf("FTS hits (-want +got):\n%s", diff)
	}
	if hits[0].Title != "Bread" || !strings.Contains(hits[0].Prelude, "Recipes/Bread.md") {
		t.Fatalf("hit = %+v, want title Bread and the path in the prelude", hits[0])
	}
	// The prelude is searched too: the path's folder finds the note.
	hits, err = s.Search().SearchFTS(context.Background(), "travel", 5, vault.ScopeAll, vault.FieldWeights{})
	if err != nil || len(hits) != 1 || hits[0].Path != "Travel/Kyoto.md" {
		t.Fatalf("prelude search = %v, %v; want Travel/Kyoto.md", paths(hits), err)
	}
	// Diacritics are folded.
	mustApply(t, s, upserts(note("Café.md", "Crème brûlée at the café.\n")))
	hits, err = s.Search().SearchFTS(context.Background(), "creme brulee", 5, vault.ScopeAll, vault.FieldWeights{})
	if err != nil || len(hits) != 1 {
		t.Fatalf("diacritic-folded search = %v, %v", paths(hits), err)
	}
}

func TestFTSWordsNeverPassSyntax(t *testing.T) {
	for in, want := range map[string][]string{
		`hello world`:           {"hello", "world"},
		`NEAR(a b) AND "x" OR*`: {"near", "a", "b", "and", "x", "or"},
		`---`:                   nil,
		`Hello hello`:           {"hello"},
	} {
		if diff := cmp.Diff(want, ftsWords(in)); diff != "" {
			t.Errorf("ftsWords(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestUnchangedNoteIsNotRewritten(t *testing.T) {
	s := mustOpen(t, Options{})
	n := note("a.md", "## One\n\n"+strings.Repeat("alpha beta gamma. ", 100))
	mustApply(t, s, upserts(n))
	before := str(t, s, `SELECT group_concat(rowid || ':' || chunk_id) FROM chunks`)
	indexedAt := count(t, s, `SELECT indexed_at FROM docs`)

	if res := mustApply(t, s, upserts(n)); res.Unchanged != 1 || res.Written() {
		t.Fatalf("same rev and text: %+v, want Unchanged", res)
	}
	n.Rev = "2-b"
	if res := mustApply(t, s, upserts(n)); res.Touched != 1 {
		t.Fatalf("new rev, same text: %+v, want Touched", res)
	}
	if got := str(t, s, `SELECT rev FROM docs`); got != "2-b" {
		t.Fatalf("rev = %q, want 2-b", got)
	}
	after := str(t, s, `SELECT group_concat(rowid || ':' || chunk_id) FROM chunks`)
	if before != after || count(t, s, `SELECT indexed_at FROM docs`) != indexedAt {
		t.Fatalf("chunks rewritten for unchanged text: %s -> %s", before, after)
	}

	n.Text += "\n\nA new paragraph.\n"
	n.Rev = "3-c"
	if res := mustApply(t, s, upserts(n)); res.Changed != 1 {
		t.Fatalf("changed text: %+v, want Changed", res)
	}
	if after2 := str(t, s, `SELECT group_concat(rowid || ':' || chunk_id) FROM chunks`); after2 == after {
		t.Fatal("changed text kept the old chunk rows")
	}
	// Chunk ids are stable: same doc, heading path and ordinal, same id.
	if got, want := str(t, s, `SELECT chunk_id FROM chunks`), strings.SplitN(strings.SplitN(before, ",", 2)[0], ":", 2)[1]; got != want {
		t.Fatalf("chunk id changed across rewrites: %s -> %s", want, got)
	}
	if res := mustApply(t, s, Batch{Upserts: []vault.NoteInput{n}, Force: true}); res.Changed != 1 {
		t.Fatalf("Force: %+v, want Changed", res)
	}
}

func TestDeleteRemovesEveryTrace(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(
		note("A.md", "Links to [[B]] and #shared.\n"),
		note("B.md", "---\naliases: [Bee]\ntags: [bees]\n---\nZebraword lives here. Back to [[A]].\n"),
	))
	embedAll(t, s, func(string) []float32 { return []float32{1, 0, 0, 0} })
	if got := count(t, s, `SELECT count(*) FROM edges WHERE dst = 'b.md'`); got != 1 {
		t.Fatalf("edges to b.md = %d, want 1", got)
	}
	vecsBefore := count(t, s, `SELECT count(*) FROM vectors`)

	res := mustApply(t, s, Batch{Deletes: []string{"b.MD"}})
	if res.Deleted != 1 {
		t.Fatalf("Deleted = %d, want 1", res.Deleted)
	}
	for q, want := range map[string]int{
		`SELECT count(*) FROM docs WHERE doc_id = 'b.md'`:                            0,
		`SELECT count(*) FROM chunks WHERE doc_id = 'b.md'`:                          0,
		`SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'zebraword'`:         0,
		`SELECT count(*) FROM aliases WHERE doc_id = 'b.md'`:                         0,
		`SELECT count(*) FROM edges WHERE src = 'b.md' OR dst = 'b.md'`:              0,
		`SELECT count(*) FROM edges WHERE src = 'a.md' AND resolved = 0`:             1,
		`SELECT count(*) FROM vectors`:                                               vecsBefore - 1,
		`SELECT count(*) FROM vectors WHERE chunk NOT IN (SELECT rowid FROM chunks)`: 0,
	} {
		if got := count(t, s, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	if res := mustApply(t, s, Batch{Deletes: []string{"B.md"}}); res.Absent != 1 {
		t.Fatalf("second delete: %+v, want Absent", res)
	}
	// Re-created, it comes back and A's link resolves again.
	mustApply(t, s, upserts(note("B.md", "Back again.\n")))
	if got := count(t, s, `SELECT count(*) FROM edges WHERE src = 'a.md' AND dst = 'b.md' AND resolved = 1`); got != 1 {
		t.Fatalf("link to re-created note resolved = %d, want 1", got)
	}
}

func TestLinkResolution(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(
		note("src.md", strings.Join([]string{
			"[[Deep/Folder/Same]]",    // path-qualified: exactly that note
			"[[Folder/Same]]",         // path-qualified: the end of a longer path
			"[[same]]",                // bare: shortest path wins
			"[[Tie]]",                 // equal length: doc_id order
			"[[Nick]]",                // alias
			"[[Later|shown text]]",    // indexed later in this batch
			"[[Nowhere]]",             // never resolves
			"![[Diagram.md#^block1]]", // embed with .md and block
			"`[[InCode]]`",            // not a link
		}, "\n")+"\n"),
		note("Deep/Folder/Same.md", "deep\n"),
		note("Same.md", "root\n"),
		note("x/Tie.md", "x\n"),
		note("a/Tie.md", "a\n"),
		note("Aliased.md", "---\naliases:\n  - Nick\n---\nbody\n"),
		note("Later.md", "later\n"),
		note("Diagram.md", "diagram\n"),
	))
	got := map[string]string{}
	rows, err := s.writer.Query(`SELECT target, coalesce(dst, '') FROM edges WHERE src = 'src.md' AND kind = 'wikilink'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var target, dst string
		if err := rows.Scan(&target, &dst); err != nil {
			t.Fatal(err)
		}
		got[target] = dst
	}
	rows.Close()
	want := map[string]string{
		"deep/folder/same": "deep/folder/same.md",
		"folder/same":      "deep/folder/same.md",
		"same":             "same.md",
		"tie":              "a/tie.md",
		"nick":             "aliased.md",
		"later":            "later.md",
		"nowhere":          "",
		"diagram":          "diagram.md",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("resolution (-want +got):\n%s", diff)
	}

	// A note in a later batch resolves a link left unresolved before.
	mustApply(t, s, upserts(note("Nowhere.md", "now here\n")))
	if d := str(t, s, `SELECT coalesce(dst, '') FROM edges WHERE target = 'nowhere'`); d != "nowhere.md" {
		t.Fatalf("later note: dst = %q, want nowhere.md", d)
	}
	// A shorter namesake added later takes over the bare link.
	mustApply(t, s, upserts(note("Tie.md", "shorter\n")))
	if d := str(t, s, `SELECT dst FROM edges WHERE target = 'tie'`); d != "tie.md" {
		t.Fatalf("shorter namesake: dst = %q, want tie.md", d)
	}
	// Deleting the winner falls back to the next candidate.
	mustApply(t, s, Batch{Deletes: []string{"Same.md"}})
	if d := str(t, s, `SELECT dst FROM edges WHERE target = 'same'`); d != "deep/folder/same.md" {
		t.Fatalf("after deleting Same.md: dst = %q, want deep/folder/same.md", d)
	}
}

// TestLinkResolutionWithinABatch: a batch resolves each link key once
// (applier.resolve) while the notes that decide it are written in the same
// batch, between the notes that link to them.
func TestLinkResolutionWithinABatch(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(
		note("First.md", "Before anything: [[Same]] and [[Nick]].\n"),
		note("Deep/Same.md", "deep\n"),
		note("Second.md", "After the deep one: [[Same]].\n"),
		note("Same.md", "root\n"),
		note("Third.md", "After the shorter one: [[Same]] and [[Nick]].\n"),
		note("Aliased.md", "---\naliases:\n  - Nick\n---\nbody\n"),
	))
	for _, c := range []struct{ target, want string }{{"same", "same.md"}, {"nick", "aliased.md"}} {
		if got := str(t, s, `SELECT group_concat(DISTINCT coalesce(dst, '')) FROM edges WHERE target = ?`, c.target); got != c.want {
			t.Errorf("links to %q resolve to %q, want only %q", c.target, got, c.want)
		}
	}
	text := str(t, s, `SELECT link_text FROM docs WHERE doc_id = 'same.md'`)
	for _, from := range []string{"First", "Second", "Third"} {
		if !strings.Contains(text, from+":") {
			t.Errorf("Same.md's link text lacks %s's link:\n%s", from, text)
		}
	}
	if text := str(t, s, `SELECT link_text FROM docs WHERE doc_id = 'deep/same.md'`); text != "" {
		t.Errorf("Deep/Same.md, linked by no note, has link text %q", text)
	}
}

func TestTopicEdgesAndPrelude(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(
		note("20 clippings/Sourdough starter.md", "Feed the starter daily.\n"),
		note("20 clippings/Unrelated.md", "Nothing about bread.\n"),
	))
	mustApply(t, s, upserts(note("99 topics/Baking.md", "# Baking\n\nSee also [[Unrelated]].\n\n<!-- begin:clippings -->\n- [[Sourdough starter]]\n<!-- end:clippings -->\n")))
	if got := count(t, s, `SELECT count(*) FROM edges WHERE kind = 'topic' AND src = '99 topics/baking.md' AND dst = '20 clippings/sourdough starter.md'`); got != 1 {
		t.Fatalf("topic edges = %d, want 1", got)
	}
	if got := count(t, s, `SELECT count(*) FROM edges WHERE kind = 'wikilink' AND src = '99 topics/baking.md' AND dst = '20 clippings/unrelated.md'`); got != 1 {
		t.Fatalf("wikilink outside the region = %d, want 1", got)
	}
	if prelude := str(t, s, `SELECT prelude FROM chunks WHERE doc_id = '20 clippings/sourdough starter.md'`); !strings.Contains(prelude, "topics: Baking") {
		t.Fatalf("prelude = %q, want the topic membership", prelude)
	}
	// The topic is in the clipping's own fields; the note the topic note
	// merely links to is found by the link text alone, what the topic note
	// says about it.
	prelude := vault.FieldWeights{Title: 1, Headings: 1, Path: 1, Topics: 1, Body: 1}
	hits, err := s.Search().SearchFTS(context.Background(), "baking", 5, vault.ScopeAll, prelude)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(paths(hits), "20 clippings/Sourdough starter.md") || contains(paths(hits), "20 clippings/Unrelated.md") {
		t.Fatalf("search by topic = %v, want the clipping and not the unrelated note", paths(hits))
	}
	if hits, err = s.Search().SearchFTS(context.Background(), "baking", 5, vault.ScopeAll, vault.FieldWeights{Links: 1}); err != nil || !contains(paths(hits), "20 clippings/Unrelated.md") {
		t.Fatalf("search by link text = %v, %v; want the linked note", paths(hits), err)
	}
	// Removing the topic note removes the membership from the prelude.
	mustApply(t, s, Batch{Deletes: []string{"99 topics/Baking.md"}})
	if prelude := str(t, s, `SELECT prelude FROM chunks WHERE doc_id = '20 clippings/sourdough starter.md'`); strings.Contains(prelude, "topics") {
		t.Fatalf("prelude after topic deletion = %q", prelude)
	}
	// Outside 99 topics/ the markers mean nothing.
	mustApply(t, s, upserts(note("Other/List.md", "<!-- begin:clippings -->\n[[Unrelated]]\n<!-- end:clippings -->\n")))
	if got := count(t, s, `SELECT count(*) FROM edges WHERE kind = 'topic'`); got != 0 {
		t.Fatalf("topic edges outside 99 topics/ = %d, want 0", got)
	}
}

func TestTagEdges(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(note("t.md", "---\ntags: [Wine, red/bordeaux]\n---\n# Heading not a tag\n\nTasted #wine and #Cheese, not `#code` nor #123.\n")))
	got := strings.Split(str(t, s, `SELECT group_concat(dst, ' ') FROM (SELECT dst FROM edges WHERE kind = 'tag' ORDER BY dst)`), " ")
	if diff := cmp.Diff([]string{"#cheese", "#red/bordeaux", "#wine"}, got); diff != "" {
		t.Fatalf("tags (-want +got):\n%s", diff)
	}
}

func TestCheckpointCommitsWithBatch(t *testing.T) {
	s := mustOpen(t, Options{})
	ctx := context.Background()
	if _, ok, err := s.Feed().Checkpoint(ctx, "couch"); err != nil || ok {
		t.Fatalf("fresh checkpoint: ok=%v err=%v", ok, err)
	}
	mustApply(t, s, Batch{Upserts: []vault.NoteInput{note("a.md", "a")}, Source: "couch", Checkpoint: "12-opaque"})
	if st, ok, err := s.Feed().Checkpoint(ctx, "couch"); err != nil || !ok || st.Since != "12-opaque" {
		t.Fatalf("checkpoint = %q %v %v", st.Since, ok, err)
	}
	// A failing batch writes neither its notes nor its checkpoint.
	_, err := s.Feed().Apply(ctx, Batch{Upserts: []vault.NoteInput{note("b.md", "b"), {Path: ""}}, Source: "couch", Checkpoint: "13-x"})
	if err == nil {
		t.Fatal("Apply with a path-less note succeeded")
	}
	if st, _, _ := s.Feed().Checkpoint(ctx, "couch"); st.Since != "12-opaque" {
		t.Fatalf("checkpoint after failed batch = %q, want 12-opaque", st.Since)
	}
	if got := count(t, s, `SELECT count(*) FROM docs WHERE doc_id = 'b.md'`); got != 0 {
		t.Fatal("failed batch left b.md behind")
	}
}

func TestRebuildDropsEveryVector(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(note("a.md", "alpha")))
	embedAll(t, s, func(string) []float32 { return []float32{0, 1, 0, 0} })
	s.Close()

	s2 := mustOpen(t, Options{Path: path, Space: vault.EmbeddingSpace{Model: "ollama/bge-m3", Dim: 1024}, Rebuild: true})
	st, err := s2.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Vectors != 0 || st.EmbeddingBacklog != st.Chunks || st.EmbeddingModel != "ollama/bge-m3" || st.Notes != 1 || st.Reembedding != nil {
		t.Fatalf("after rebuild: %+v", st)
	}
}

func TestMigrationsAreRecordedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	s := mustOpen(t, Options{Path: path})
	s.Close()
	s = mustOpen(t, Options{Path: path})
	if n := count(t, s, `SELECT count(*) FROM schema_migrations`); n < 1 {
		t.Fatalf("schema_migrations rows = %d", n)
	}
	if v := str(t, s, `SELECT value FROM meta WHERE key = 'schema_version'`); v == "" || v == "0" {
		t.Fatalf("schema_version = %q", v)
	}
	if mode := str(t, s, `PRAGMA journal_mode`); mode != "wal" {
		t.Fatalf("journal_mode = %q, want wal", mode)
	}
}

func TestStats(t *testing.T) {
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	mustApply(t, s, upserts(
		note("SensitivityOpen.md", "Links [[Private/Diary]] and [[Missing]] #tag"),
		note("Private/Diary.md", "secret"),
	))
	embedAll(t, s, func(string) []float32 { return []float32{1, 1, 0, 0} })
	mustApply(t, s, upserts(note("Late.md", "late")))
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.FileBytes, st.SchemaVersion = 0, ""
	want := Stats{Notes: 3, Chunks: 3, Vectors: 2, EmbeddingBacklog: 1, OpenVectors: 1, OpenEmbeddingBacklog: 1, OpenNotes: 2, PersonalNotes: 1, OpenChunks: 2, PersonalChunks: 1,
		LinksResolved: 1, LinksUnresolved: 1, TagEdges: 1, EmbeddingModel: "test/fixed", EmbeddingDim: 4}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Fatalf("stats (-want +got):\n%s", diff)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestSecondWriterFailsAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	first := mustOpen(t, Options{Path: path})
	_, err := Open(context.Background(), Options{Path: path, Space: testSpace})
	if !errors.Is(err, errLocked) {
		t.Fatalf("second writer: %v, want errLocked", err)
	}
	for _, want := range []string{path, fmt.Sprintf("pid %d", os.Getpid()), path + ".lock"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// Readers take no lock.
	ro := mustOpen(t, Options{Path: path, ReadOnly: true})
	if _, err := ro.Stats(context.Background()); err != nil {
		t.Fatalf("reader beside a writer: %v", err)
	}
	// The lock goes with the writer.
	first.Close()
	mustOpen(t, Options{Path: path}).Close()
}

// TestReaderSearchesTheActiveSpace: a reader configured with another space
// than the index's (a changed config before serve has re-embedded) reads
// the index's active space, and refuses an index no writer gave one.
func TestReaderSearchesTheActiveSpace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.db")
	mustOpen(t, Options{Path: path}).Close()
	for _, space := range []vault.EmbeddingSpace{{Model: testSpace.Model, Dim: 8}, {Model: "ollama/bge-m3", Dim: testSpace.Dim}} {
		r, err := Open(context.Background(), Options{Path: path, Space: space, ReadOnly: true})
		if err != nil {
			t.Fatalf("reader with %v on a %v index: %v", space, testSpace, err)
		}
		if got := r.Search().ActiveSpace(); got != testSpace {
			t.Errorf("reader with %v searches %v, want the index's %v", space, got, testSpace)
		}
		r.Close()
	}
}

func TestWriterNeedsAWritableDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "i.db")
	_, err := Open(context.Background(), Options{Path: missing, Space: testSpace})
	if !errors.Is(err, ErrIndexPath) || !strings.Contains(err.Error(), "directory "+filepath.Dir(missing)+" does not exist") {
		t.Fatalf("missing directory: %v", err)
	}
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), Options{Path: filepath.Join(file, "i.db"), Space: testSpace})
	if !errors.Is(err, ErrIndexPath) || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("directory that is a file: %v", err)
	}
}

// A sync writes only what its plan saw: a note written after the plan was
// made (by a follower, say) is newer than the listing and is kept, and a
// note deleted since is not brought back.
func TestSyncIsACompareAndSetOnItsPlan(t *testing.T) {
	s := mustOpen(t, Options{})
	ctx := context.Background()
	mustApply(t, s, upserts(note("a.md", "alpha one"), note("gone.md", "to be deleted")))
	listing := []vault.NoteInput{note("a.md", "alpha listed"), note("gone.md", "to be deleted, listed"), note("new.md", "new")}
	plan, err := s.Feed().Plan(ctx, listing)
	if err != nil {
		t.Fatal(err)
	}
	newer := note("a.md", "alpha two")
	newer.Rev = "2-b"
	mustApply(t, s, Batch{Upserts: []vault.NoteInput{newer}, Deletes: []string{"gone.md"}})

	res, err := s.Feed().Sync(ctx, listing, plan, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stale != 2 || res.Added != 1 {
		t.Fatalf("sync: %+v, want 2 stale (a.md, gone.md) and new.md added", res.ApplyResult)
	}
	if got := str(t, s, `SELECT group_concat(path || '@' || rev, ' ') FROM (SELECT path, rev FROM docs ORDER BY path)`); got != "a.md@2-b new.md@1-a" {
		t.Fatalf("index after the sync: %s", got)
	}
}

// An index migrated by a newer vaultask is refused, for writing and for
// reading, with what to do; nothing is applied to it.
func TestIndexFromANewerVaultask(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vaultask.db")
	s := mustOpen(t, Options{Path: path})
	if _, err := s.writer.Exec(`INSERT INTO schema_migrations(name, applied_at) VALUES ('migrations/9999_from_the_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, readOnly := range []bool{false, true} {
		_, err := Open(context.Background(), Options{Path: path, Space: testSpace, ReadOnly: readOnly})
		if !errors.Is(err, errNewerIndex) || !strings.Contains(err.Error(), "9999_from_the_future.sql") || !strings.Contains(err.Error(), "upgrade vaultask") {
			t.Errorf("ReadOnly %v: %v, want errNewerIndex naming the migration and what to do", readOnly, err)
		}
	}
}

// Every connection the store opens maps the file (mmapSize): the writer's,
// the reader pool's, and a read-only store's.
func TestConnectionsMapTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(note("a.md", "# A\n\nSome text.")))
	ro := mustOpen(t, Options{Path: path, ReadOnly: true, AsClassified: true})
	for _, pool := range []struct {
		name  string
		db    *sql.DB
		conns int // held at once, so that the pool opens that many
	}{{"writer", s.writer, 1}, {"reader", s.reader, 2}, {"read-only store's reader", ro.reader, 2}} {
		for i := range pool.conns {
			c, err := pool.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var size int64
			if err := c.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&size); err != nil {
				t.Fatal(err)
			}
			if size != mmapSize {
				t.Errorf("%s connection %d: mmap_size %d, want %d", pool.name, i, size, mmapSize)
			}
		}
	}
}
