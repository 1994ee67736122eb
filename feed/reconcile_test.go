package feed

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/vault"
)

// edgeTexts is what testdata/edge.all_docs.json indexes to: one note per
// edge case of FORMAT.md §11 that yields text. Everything else in the
// fixture is skipped (hidden, customisation and plugin docs, design, version,
// sync-info and chunk-pack docs, a path with ':', a flag file, a binary, a
// soft-deleted note, a note outside the corpus, an .svg) or waits (a size
// mismatch, a missing chunk).
var edgeTexts = map[string]string{
	"Notes/Shopping List.md": "# Shopping list\n\nThings to buy on Saturday, before the market closes at noon:\n\n- eggs\n- milk\n- [[Bread recipe]]\n",
	"Meeting.md":             "Meeting notes\nDecided to ship on Friday.\n",         // eden
	"Old Note.md":            "# Old note\nwritten before chunking existed\n",       // legacy inline, no path, case kept
	"Legacy Array.md":        "# Legacy\nin two pieces\n",                           // no type, data array
	"_old/thing.md":          "Old private note.\n",                                 // no path, id "/_old/…"
	"Compressed.md":          strings.Repeat("compressible ", 4) + "compressible\n", // \x0ELZ\x1D chunk
	"Dup.md":                 "la la di da\n",                                       // duplicate children
	"Empty Note.md":          "",                                                    // empty children
	"OddLeaf.md":             "An odd leaf id.\n",                                   // leaf without h:
	"Plain/Obfuscated.md":    "Obfuscated id, plain path.\n",                        // f: id, plain path
	"Cafe\u0301.md":          "Accents decomposed.\n",                               // non-NFC path kept
	"Notes/Dupe.md":          "current text\n",                                      // derived id beats a newer stale one
	"Notes/Alive.md":         "alive\n",                                             // a stale soft delete hides nothing
}

var edgeWaiting = map[string]string{"Mismatch.md": vault.StatusIncomplete, "Broken.md": vault.StatusIncomplete}

func TestReconcileEdgeCases(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadAllDocs(t, db, "testdata/edge.all_docs.json")
	var logs logBuffer
	opts := couchOptions(srv, db)
	opts.Logger = logs.logger()
	c := mustConnect(t, opts)
	store := mustStore(t)
	ctx := context.Background()

	// A dry run on an empty index plans every note and writes nothing.
	r := NewReconciler(c, store.Feed())
	res, err := r.Run(ctx, ReconcileOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Add) != len(edgeTexts) || len(res.Incomplete) != 2 {
		t.Fatalf("dry run: %d to add, %d incomplete; want %d, 2", len(res.Plan.Add), len(res.Incomplete), len(edgeTexts))
	}
	if got := mustSnapshot(t, store); len(got.Docs) != 0 {
		t.Fatalf("dry run wrote %d notes", len(got.Docs))
	}
	if _, ok, _ := store.Feed().Checkpoint(ctx, c.Source()); ok {
		t.Fatal("dry run saved a checkpoint")
	}

	res, err = r.Run(ctx, ReconcileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hashes(edgeTexts), mustSnapshot(t, store).Docs); diff != "" {
		t.Errorf("indexed notes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(edgeWaiting, mustStatuses(t, store)); diff != "" {
		t.Errorf("note status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(edgeSkipped, mustSkipped(t, store)); diff != "" {
		t.Errorf("skipped notes (-want +got):\n%s", diff)
	}
	seq, _ := srv.DBInfo(t, db)
	if st, ok, _ := store.Feed().Checkpoint(ctx, c.Source()); !ok || st.Since != seq || res.Since != seq {
		t.Errorf("checkpoint %q (saved %v), result %q; want the update_seq %q taken before the scan", st.Since, ok, res.Since, seq)
	}
	if !strings.Contains(logs.String(), "format is newer") {
		t.Error("no warning for a version document newer than 12")
	}

	// Reconciling again changes nothing.
	res, err = r.Run(ctx, ReconcileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sync.Written() || len(res.Plan.Add)+len(res.Plan.Change)+len(res.Plan.Remove) != 0 {
		t.Errorf("second reconcile: plan %+v, sync %+v; want nothing to do", res.Plan, res.Sync.ApplyResult)
	}
}

// The real fixtures written by LiveSync's CLI, plain and end-to-end
// encrypted with obfuscated paths, index to the texts the decoder reads.
func TestReconcileFixtures(t *testing.T) {
	srv := couchtest.Start(t)
	for _, tc := range []struct {
		name, passphrase string
		want             []string
	}{
		{"vault", "", []string{"Notes/Shopping List.md", "_private/Calculus.md"}},
		{"vaultenc", passphrase, []string{"Notes/Shopping List.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := srv.NewDB(t)
			srv.LoadFixture(t, db, fixtures, tc.name)
			opts := couchOptions(srv, db)
			opts.Passphrase = tc.passphrase
			c := mustConnect(t, opts)
			store := mustStore(t)
			if _, err := NewReconciler(c, store.Feed()).Run(context.Background(), ReconcileOptions{}); err != nil {
				t.Fatal(err)
			}
			want := decodedTexts(t, c.dec, filepath.Join(fixtures, tc.name+".all_docs.json"))
			if len(want) != len(tc.want) {
				t.Fatalf("fixture decodes to %d notes, want %v", len(want), tc.want)
			}
			for _, p := range tc.want {
				if want[p] == "" {
					t.Errorf("fixture lacks %s", p)
				}
			}
			if diff := cmp.Diff(hashes(want), mustSnapshot(t, store).Docs); diff != "" {
				t.Errorf("indexed notes (-want +got):\n%s", diff)
			}
		})
	}
}

// decodedTexts is the text of every live markdown note of an _all_docs dump,
// read straight through the decoder: what the index must hold.
func decodedTexts(tb testing.TB, dec *livesync.Decoder, dump string) map[string]string {
	tb.Helper()
	chunks := livesync.ChunkMap{}
	var notes []*livesync.Note
	for _, r := range allDocRows(tb, dump) {
		doc, err := dec.Decode(r.Doc)
		if err != nil {
			tb.Fatalf("decode %s: %v", r.ID, err)
		}
		switch doc.Kind {
		case livesync.KindChunk:
			chunks[doc.ID] = doc.Data
		case livesync.KindNote:
			if !doc.Note.Deleted && !doc.Note.Binary && testCorpus.Match(doc.Note.Path) {
				notes = append(notes, doc.Note)
			}
		}
	}
	out := map[string]string{}
	for _, n := range notes {
		b, err := n.Read(chunks)
		if err != nil {
			tb.Fatal(err)
		}
		out[n.Path] = string(b)
	}
	return out
}

// A reconcile's listing is a snapshot: a note edited or deleted while the
// database is listed (a follower applies the change meanwhile) must keep its
// newer state, not get the listing's older revision back. The proxy holds
// the reconcile right after its _all_docs listing until the follower has
// applied the change, which is the race that left the index on revision N-1
// (or brought a deleted note back) in every trial before the recheck.
func TestReconcileListingOlderThanIndex(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, srv *couchtest.Server, db string, note map[string]any)
		want   map[string]string
	}{
		{
			name: "edit",
			change: func(t *testing.T, srv *couchtest.Server, db string, note map[string]any) {
				edited, chunk := liveNote("Notes/Race.md", "revision two\n")
				edited["_rev"] = getDoc(t, srv, db, note["_id"].(string))["_rev"]
				bulk(t, srv, db, chunk, edited)
			},
			want: map[string]string{"Notes/Race.md": hashOf("revision two\n"), "Notes/Other.md": hashOf("other\n")},
		},
		{
			name: "soft delete",
			change: func(t *testing.T, srv *couchtest.Server, db string, note map[string]any) {
				doc := getDoc(t, srv, db, note["_id"].(string))
				doc["deleted"] = true
				put(t, srv, db, doc)
			},
			want: map[string]string{"Notes/Other.md": hashOf("other\n")},
		},
		{
			name: "tombstone",
			change: func(t *testing.T, srv *couchtest.Server, db string, note map[string]any) {
				del(t, srv, db, note["_id"].(string))
			},
			want: map[string]string{"Notes/Other.md": hashOf("other\n")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := couchtest.Start(t)
			db := srv.NewDB(t)
			note, chunk := liveNote("Notes/Race.md", "revision one\n")
			other, otherChunk := liveNote("Notes/Other.md", "other\n")
			bulk(t, srv, db, chunk, note, otherChunk, other)
			store := mustStore(t)
			f := mustFollow(t, mustConnect(t, couchOptions(srv, db)), store, fastOptions())
			waitCaughtUp(t, srv, db, f)

			// Reconcile through a proxy that, once the listing is served,
			// changes the note and waits for the follower to apply it.
			rec := &recorder{next: srv.URL}
			var armed atomic.Bool
			var once sync.Once
			rec.after = func(method, path string) {
				if armed.Load() && method == http.MethodGet && strings.HasSuffix(path, "/_all_docs") {
					once.Do(func() {
						tc.change(t, srv, db, note)
						waitCaughtUp(t, srv, db, f)
					})
				}
			}
			opts := couchOptions(srv, db)
			opts.URL = newRecordingProxy(t, rec)
			c := mustConnect(t, opts) // its probe for encrypted chunks lists _all_docs too
			armed.Store(true)
			if _, err := NewReconciler(c, store.Feed()).Run(context.Background(), ReconcileOptions{}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, mustSnapshot(t, store).Docs); diff != "" {
				t.Fatalf("index after the reconcile (-want +got):\n%s", diff)
			}
		})
	}
}

// Unclean paths are folded (a doubled '/', a "./" segment) or refused with
// the reason in the note's status (absolute, climbing out with "..", a line
// break in the name), by the reconcile and by the follower alike.
func TestUncleanPaths(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	var docs []map[string]any
	for i, p := range []string{"../../x.md", "/etc/passwd.md", "Notes//Doubled.md", "Notes/./Dotted.md", "New\nLine.md"} {
		n, c := liveNote(p, fmt.Sprintf("note %d\n", i))
		n["_id"] = fmt.Sprintf("doc-%d", i)
		docs = append(docs, c, n)
	}
	bulk(t, srv, db, docs...)
	want := map[string]string{"Notes/Doubled.md": hashOf("note 2\n"), "Notes/Dotted.md": hashOf("note 3\n")}
	wantSkipped := map[string]string{
		"../../x.md":     "climbs out of the vault",
		"/etc/passwd.md": "absolute",
		"New\nLine.md":   "control character",
	}
	check := func(t *testing.T, store *index.Store) {
		t.Helper()
		if diff := cmp.Diff(want, mustSnapshot(t, store).Docs); diff != "" {
			t.Errorf("indexed (-want +got):\n%s", diff)
		}
		skipped := mustSkipped(t, store)
		for p, why := range wantSkipped {
			if !strings.Contains(skipped[p], why) {
				t.Errorf("%q: skipped for %q, want a reason saying %q", p, skipped[p], why)
			}
		}
	}
	t.Run("reconcile", func(t *testing.T) {
		store := mustStore(t)
		if _, err := NewReconciler(mustConnect(t, couchOptions(srv, db)), store.Feed()).Run(context.Background(), ReconcileOptions{}); err != nil {
			t.Fatal(err)
		}
		check(t, store)
	})
	t.Run("follower", func(t *testing.T) {
		store := mustStore(t)
		c := mustConnect(t, couchOptions(srv, db))
		if _, err := store.Feed().Apply(context.Background(), index.Batch{Source: c.Source(), Checkpoint: "0"}); err != nil {
			t.Fatal(err)
		}
		f := mustFollow(t, c, store, fastOptions())
		waitCaughtUp(t, srv, db, f)
		check(t, store)
	})
}
