package feed

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/tstest/corpustext"
	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/vault"
)

// Corpus matches doublestar globs, case-sensitive, exclude over include.
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

// The help corpus indexes its 265 markdown notes less the soft-deleted one,
// with the three edited notes at their edited revision.
func TestCorpusHelp(t *testing.T) {
	dir := corpustext.Require(t)
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadFixture(t, db, dir, "help")
	c := mustConnect(t, couchOptions(srv, db))
	store := mustStore(t)
	res, err := NewReconciler(c, store.Feed()).Run(context.Background(), ReconcileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := mustSnapshot(t, store).Docs
	if len(got) != 264 || res.Notes != 264 || len(res.Incomplete) != 0 {
		t.Fatalf("%d notes indexed (listing %d, %d incomplete), want 264", len(got), res.Notes, len(res.Incomplete))
	}
	want := decodedTexts(t, &livesync.Decoder{}, filepath.Join(dir, "help.all_docs.json.gz"))
	if diff := cmp.Diff(hashes(want), got); diff != "" {
		t.Errorf("indexed notes (-want +got):\n%s", diff)
	}
	if _, ok := got["en/Plugins/Random note.md"]; ok {
		t.Error("the soft-deleted note is indexed")
	}
	if _, ok := got["sv/Filer och mappar/Konfigurationsmapp.md"]; !ok {
		t.Error("the note re-created after a soft delete is missing")
	}
	db2 := mustSQL(t, store)
	for _, p := range []string{"en/Home.md", "sv/Filer och mappar/Hantera anteckningar.md", "tr/Eklentiler/Dosya Gezgini.md"} {
		var rev string
		if err := db2.QueryRow(`SELECT rev FROM docs WHERE path = ?`, p).Scan(&rev); err != nil || !strings.HasPrefix(rev, "2-") {
			t.Errorf("edited note %s: rev %q, %v; want its second revision", p, rev, err)
		}
	}
}

// help-enc (end-to-end encrypted, obfuscated paths) and help-case
// (case-preserving ids) index to the same texts as their part of help, but
// for the note edited in help after help-case was written.
func TestCorpusHelpTwins(t *testing.T) {
	dir := corpustext.Require(t)
	srv := couchtest.Start(t)
	help := decodedTexts(t, &livesync.Decoder{}, filepath.Join(dir, "help.all_docs.json.gz"))
	for _, tc := range []struct {
		name, passphrase, prefix string
		edited                   []string
	}{
		{"help-enc", passphrase, "en/Obsidian Sync/", nil},
		{"help-case", "", "tr/", []string{"tr/Eklentiler/Dosya Gezgini.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := srv.NewDB(t)
			srv.LoadFixture(t, db, dir, tc.name)
			opts := couchOptions(srv, db)
			opts.Passphrase = tc.passphrase
			c := mustConnect(t, opts)
			store := mustStore(t)
			if _, err := NewReconciler(c, store.Feed()).Run(context.Background(), ReconcileOptions{}); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for p, text := range help {
				if strings.HasPrefix(p, tc.prefix) {
					want[p] = text
				}
			}
			if len(want) == 0 {
				t.Fatalf("help has no %s notes", tc.prefix)
			}
			if len(tc.edited) > 0 {
				own := decodedTexts(t, c.dec, filepath.Join(dir, tc.name+".all_docs.json"))
				for _, p := range tc.edited {
					if own[p] == want[p] {
						t.Errorf("%s: the same text in help and %s, want help's edit", p, tc.name)
					}
					want[p] = own[p]
				}
			}
			if diff := cmp.Diff(hashes(want), mustSnapshot(t, store).Docs); diff != "" {
				t.Errorf("indexed notes (-want +got):\n%s", diff)
			}
		})
	}
}

// The Hub corpus: 6,571 notes, one of them (🗂️ hub.md) outside the test
// server's default _all_docs range, found through _changes.
func TestCorpusHub(t *testing.T) {
	if testing.Short() {
		t.Skip("the Hub corpus takes a while; run without -short")
	}
	dir := corpustext.Require(t)
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	loadHub(t, srv, db, dir)
	c := mustConnect(t, couchOptions(srv, db))
	store := mustStore(t)
	res, err := NewReconciler(c, store.Feed()).Run(context.Background(), ReconcileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := mustSnapshot(t, store).Docs
	if len(got) != 6571 || len(res.Incomplete) != 0 {
		t.Errorf("%d notes indexed, %d incomplete; want 6571, 0", len(got), len(res.Incomplete))
	}
	if _, ok := got["🗂️ hub.md"]; !ok {
		t.Error("🗂️ hub.md, outside _all_docs' default range, is not indexed")
	}
}

// loadHub loads the Hub dump, and the documents _all_docs could not dump
// (ids outside the BMP) from the _changes dump.
func loadHub(tb testing.TB, srv *couchtest.Server, db, dir string) {
	tb.Helper()
	srv.LoadFixture(tb, db, dir, "hub")
	listed := revs(tb, srv, db)
	var rest []couchtest.ChangeRow
	for _, r := range couchtest.ReadChanges(tb, filepath.Join(dir, "hub.changes.json.gz")) {
		if _, ok := listed[r.ID]; !ok && !r.Deleted {
			rest = append(rest, r)
		}
	}
	if len(rest) == 0 {
		tb.Fatal("every Hub document is in _all_docs: the quirk this corpus tests is gone")
	}
	srv.ReplayChanges(tb, db, rest, 100)
}

// A removal the index plans because _all_docs did not list a note is
// confirmed by key first: a live note found that way is kept.
func TestReconcileConfirmsRemovals(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadAllDocs(t, db, "testdata/edge.all_docs.json")
	c := mustConnect(t, couchOptions(srv, db))
	store := mustStore(t)
	ctx := context.Background()
	r := NewReconciler(c, store.Feed())
	if _, err := r.Run(ctx, ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	del(t, srv, db, "meeting.md")
	l, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// As if _all_docs had dropped Dup.md.
	var kept []vault.NoteInput
	for _, n := range l.Notes {
		if n.Path != "Dup.md" {
			kept = append(kept, n)
		}
	}
	l.Notes = kept
	var res ReconcileResult
	if err := r.plan(ctx, &l, &res); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(res.Kept, []string{"Dup.md"}) || !cmp.Equal(res.Plan.Remove, []string{"Meeting.md"}) {
		t.Errorf("kept %v, remove %v; want Dup.md kept and only the deleted Meeting.md removed", res.Kept, res.Plan.Remove)
	}
}
