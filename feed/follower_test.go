package feed

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/tstest/corpustext"
	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/vault"
)

// Notes that arrive before their chunks are parked, not indexed with partial
// text, and indexed when the chunks arrive; notes whose chunks never come are
// reported incomplete after ParkTimeout, until a later revision supersedes
// them.
func TestFollowerNotesBeforeChunks(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	c := mustConnect(t, couchOptions(srv, db))
	store := mustStore(t)
	opts := fastOptions()
	opts.ParkRetry, opts.ParkTimeout = 50*time.Millisecond, time.Second
	f := mustFollow(t, c, store, opts)
	waitCaughtUp(t, srv, db, f) // the scan of the empty database

	rows := notesFirst(allDocRows(t, "testdata/edge.all_docs.json"))
	firstChunk := 0
	for i, r := range rows {
		if isLeaf(r) {
			firstChunk = i
			break
		}
	}
	srv.ReplayChanges(t, db, rows[:firstChunk], 100)
	waitCaughtUp(t, srv, db, f)
	// Without their chunks only the notes that need none are indexed: the
	// legacy inline ones, the eden-only parts can't help Meeting.md.
	got := mustSnapshot(t, store).Docs
	for p := range got {
		if p != "Old Note.md" && p != "Legacy Array.md" && p != "Empty Note.md" {
			t.Errorf("%s indexed before its chunks arrived", p)
		}
	}
	if st := f.Stats(); st.Parked < 10 {
		t.Fatalf("%d notes parked, want every chunked note", st.Parked)
	}
	if sts := mustStatuses(t, store); sts["Meeting.md"] != vault.StatusPending {
		t.Errorf("note status of a parked note = %v, want pending", sts)
	}

	srv.ReplayChanges(t, db, rows[firstChunk:], 100)
	waitCaughtUp(t, srv, db, f)
	waitFor(t, 5*time.Second, "the two broken notes to be reported incomplete", func() bool { return f.Stats().Incomplete == 2 })
	if diff := cmp.Diff(hashes(edgeTexts), mustSnapshot(t, store).Docs); diff != "" {
		t.Errorf("indexed notes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(edgeWaiting, mustStatuses(t, store)); diff != "" {
		t.Errorf("note status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(edgeSkipped, mustSkipped(t, store)); diff != "" {
		t.Errorf("skipped notes (-want +got):\n%s", diff)
	}

	// Later revisions supersede the parked ones.
	broken := getDoc(t, srv, db, "broken.md")
	note, chunk := liveNote("Broken.md", "Fixed now.\n")
	broken["children"], broken["size"] = note["children"], note["size"]
	mismatch := getDoc(t, srv, db, "mismatch.md")
	mismatch["size"] = len("di da\n")
	bulk(t, srv, db, chunk, broken, mismatch)
	waitCaughtUp(t, srv, db, f)
	want := hashes(edgeTexts)
	want["Broken.md"], want["Mismatch.md"] = hashOf("Fixed now.\n"), hashOf("di da\n")
	if diff := cmp.Diff(want, mustSnapshot(t, store).Docs); diff != "" {
		t.Errorf("after the fixes (-want +got):\n%s", diff)
	}
	if sts := mustStatuses(t, store); len(sts) != 0 || f.Stats().Parked != 0 {
		t.Errorf("status after the fixes: %v, %d parked; want none", sts, f.Stats().Parked)
	}
}

// Soft delete, tombstone (resolved through the _id → path map, also after a
// restart), re-creation and chunk tombstones.
func TestFollowerDeletesAndRecreates(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadAllDocs(t, db, "testdata/edge.all_docs.json")
	c := mustConnect(t, couchOptions(srv, db))
	store := mustStore(t)
	f := mustFollow(t, c, store, fastOptions())
	waitCaughtUp(t, srv, db, f)
	want := hashes(edgeTexts)

	// A soft delete is a new revision with deleted: true.
	dup := getDoc(t, srv, db, "dup.md")
	dup["deleted"] = true
	put(t, srv, db, dup)
	waitCaughtUp(t, srv, db, f)
	delete(want, "Dup.md")
	if diff := cmp.Diff(want, mustSnapshot(t, store).Docs); diff != "" {
		t.Fatalf("after a soft delete (-want +got):\n%s", diff)
	}

	// Re-created: a later revision without deleted.
	dup = getDoc(t, srv, db, "dup.md")
	delete(dup, "deleted")
	put(t, srv, db, dup)
	waitCaughtUp(t, srv, db, f)
	want["Dup.md"] = hashOf(edgeTexts["Dup.md"])
	if diff := cmp.Diff(want, mustSnapshot(t, store).Docs); diff != "" {
		t.Fatalf("after re-creation (-want +got):\n%s", diff)
	}

	// A real tombstone carries no path here: the follower's map has it.
	del(t, srv, db, "meeting.md")
	waitCaughtUp(t, srv, db, f)
	delete(want, "Meeting.md")
	if diff := cmp.Diff(want, mustSnapshot(t, store).Docs); diff != "" {
		t.Fatalf("after a tombstone (-want +got):\n%s", diff)
	}

	// After a restart the map comes from the index.
	closeFollower(t, f)
	f = mustFollow(t, c, store, fastOptions())
	del(t, srv, db, "compressed.md")
	waitCaughtUp(t, srv, db, f)
	delete(want, "Compressed.md")
	if diff := cmp.Diff(want, mustSnapshot(t, store).Docs); diff != "" {
		t.Fatalf("after a tombstone following a restart (-want +got):\n%s", diff)
	}

	// A chunk tombstone evicts the chunk: a new note that needs it waits
	// and is reported incomplete, and the notes already indexed stay.
	del(t, srv, db, "h:1jakh5hr29cfv")
	note, _ := liveNote("Reuse.md", "")
	note["children"], note["size"] = []string{"h:1jakh5hr29cfv"}, 0
	put(t, srv, db, note)
	waitCaughtUp(t, srv, db, f)
	waitFor(t, 5*time.Second, "Reuse.md to be reported incomplete", func() bool { return mustStatuses(t, store)["Reuse.md"] == vault.StatusIncomplete })
	if diff := cmp.Diff(want, mustSnapshot(t, store).Docs); diff != "" {
		t.Fatalf("after a chunk tombstone (-want +got):\n%s", diff)
	}

	// The chunk comes back while the follower is down: note_status makes
	// the restarted follower read Reuse.md again, though the checkpoint is
	// past it.
	closeFollower(t, f)
	put(t, srv, db, map[string]any{"_id": "h:1jakh5hr29cfv", "type": "leaf", "data": "# Shopping list\n\nThings to buy on Saturday, before the market closes at noon:\n\n"})
	f = mustFollow(t, c, store, fastOptions())
	waitCaughtUp(t, srv, db, f)
	want["Reuse.md"] = hashOf("# Shopping list\n\nThings to buy on Saturday, before the market closes at noon:\n\n")
	waitFor(t, 10*time.Second, "Reuse.md indexed after the restart", func() bool { return cmp.Equal(want, mustSnapshot(t, store).Docs) })
	if sts := mustStatuses(t, store); sts["Reuse.md"] != "" {
		t.Errorf("Reuse.md still has status %q", sts["Reuse.md"])
	}
}

// Only the winning revision of a conflicted document is indexed, and the
// loser takes over when the winner is deleted.
func TestFollowerConflicts(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	c := mustConnect(t, couchOptions(srv, db))
	store := mustStore(t)
	f := mustFollow(t, c, store, fastOptions())
	waitCaughtUp(t, srv, db, f)

	a, chunkA := liveNote("Conflict.md", "Version A.\n")
	b, chunkB := liveNote("Conflict.md", "Version B.\n")
	a["_rev"], b["_rev"] = "2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "2-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	bulk(t, srv, db, chunkA, chunkB)
	request(t, srv, http.MethodPost, db+"/_bulk_docs", map[string]any{"docs": []any{a, b}, "new_edits": false}, nil)
	waitCaughtUp(t, srv, db, f)
	if got := mustSnapshot(t, store).Docs; got["Conflict.md"] != hashOf("Version B.\n") {
		t.Fatalf("conflicted note indexed as %v, want the winner B", got)
	}
	request(t, srv, http.MethodDelete, db+"/conflict.md?rev="+url.QueryEscape(b["_rev"].(string)), nil, nil)
	waitCaughtUp(t, srv, db, f)
	if got := mustSnapshot(t, store).Docs; got["Conflict.md"] != hashOf("Version A.\n") {
		t.Fatalf("after deleting the winner: %v, want A", got)
	}
}

// A follower stopped between batches and restarted ends with the index a
// clean full scan builds; replaying everything again changes nothing.
func TestFollowerKillAndResume(t *testing.T) {
	dir := corpustext.Require(t)
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	// The real arrival order: notes before their chunks.
	srv.ReplayChanges(t, db, couchtest.ReadChanges(t, dir+"/help.changes.json.gz"), 500)
	c := mustConnect(t, couchOptions(srv, db))
	ctx := context.Background()

	path := t.TempDir() + "/index.db"
	store := mustOpenStore(t, path)
	// Follow the whole feed from its start rather than scanning it.
	if _, err := store.Feed().Apply(ctx, index.Batch{Source: c.Source(), Checkpoint: "0"}); err != nil {
		t.Fatal(err)
	}
	opts := fastOptions()
	opts.BatchRows = 200
	stop, cancel := context.WithCancel(ctx)
	batches := 0
	opts.OnBatch = func(BatchResult) {
		if batches++; batches == 5 {
			cancel()
		}
	}
	f := NewFollower(c, store.Feed(), opts)
	if err := f.Open(stop); err != nil {
		t.Fatal(err)
	}
	<-f.Done()
	if err := f.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mid := f.Stats()
	if mid.Rows == 0 || mid.Rows >= 3976 {
		t.Fatalf("stopped after %d rows; want part of the feed", mid.Rows)
	}
	store.Close()

	store = mustOpenStore(t, path)
	opts.OnBatch = nil
	f = mustFollow(t, c, store, opts)
	waitCaughtUp(t, srv, db, f)
	waitFor(t, 10*time.Second, "no parked notes", func() bool { return f.Stats().Parked == 0 })
	got := mustSnapshot(t, store)

	clean := mustStore(t)
	if _, err := NewReconciler(c, clean.Feed()).Run(ctx, ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	want := mustSnapshot(t, clean)
	if len(want.Docs) != 264 {
		t.Fatalf("clean index of help has %d notes, want 264", len(want.Docs))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resumed index differs from a clean full index (-clean +resumed):\n%s", diff)
	}

	// Idempotent: the whole feed again, from 0, writes nothing.
	closeFollower(t, f)
	if _, err := store.Feed().Apply(ctx, index.Batch{Source: c.Source(), Checkpoint: "0"}); err != nil {
		t.Fatal(err)
	}
	f = mustFollow(t, c, store, opts)
	waitCaughtUp(t, srv, db, f)
	if st := f.Stats(); st.Applied.Written() {
		t.Errorf("replaying the feed wrote: %+v", st.Applied)
	}
	if diff := cmp.Diff(want, mustSnapshot(t, store)); diff != "" {
		t.Errorf("after a replay (-clean +replayed):\n%s", diff)
	}
}

func closeFollower(tb testing.TB, f *Follower) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.Close(ctx); err != nil {
		tb.Fatal(err)
	}
}

// getDoc reads a document's current revision.
func getDoc(tb testing.TB, srv *couchtest.Server, db, id string) map[string]any {
	tb.Helper()
	var doc map[string]any
	request(tb, srv, http.MethodGet, db+"/"+url.PathEscape(id), nil, &doc)
	return doc
}

// del deletes a document's current revision: a _deleted tombstone without
// any body field.
func del(tb testing.TB, srv *couchtest.Server, db, id string) {
	tb.Helper()
	doc := getDoc(tb, srv, db, id)
	request(tb, srv, http.MethodDelete, db+"/"+url.PathEscape(id)+"?rev="+url.QueryEscape(doc["_rev"].(string)), nil, nil)
}

// The first start on an empty index scans the database, then follows from
// the sequence read before the scan: a note written while the scan runs is
// not lost.
func TestFollowerFirstScanThenFollow(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadAllDocs(t, db, "testdata/edge.all_docs.json")
	var once sync.Once
	var armed atomic.Bool
	written := make(chan struct{})
	rec := &recorder{next: srv.URL}
	rec.after = func(method, path string) {
		if armed.Load() && strings.HasSuffix(path, "/_all_docs") && method == http.MethodGet {
			once.Do(func() {
				note, chunk := liveNote("During Scan.md", "Written while the scan ran.\n")
				bulk(t, srv, db, chunk, note)
				close(written)
			})
		}
	}
	opts := couchOptions(srv, db)
	opts.URL = newRecordingProxy(t, rec)
	c := mustConnect(t, opts) // its probe for encrypted chunks lists _all_docs too
	armed.Store(true)
	store := mustStore(t)
	f := mustFollow(t, c, store, fastOptions())
	// The database's last sequence is the target only once the scan has
	// written its note.
	select {
	case <-written:
	case <-time.After(30 * time.Second):
		t.Fatal("the scan never listed _all_docs")
	}
	waitCaughtUp(t, srv, db, f)
	want := hashes(edgeTexts)
	want["During Scan.md"] = hashOf("Written while the scan ran.\n")
	if diff := cmp.Diff(want, mustSnapshot(t, store).Docs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	waitFor(t, 5*time.Second, "the follower to count itself caught up", func() bool { return f.Stats().CaughtUp })
	st := f.Stats()
	if st.Reconciles != 1 {
		t.Errorf("%d reconciles, want the one first scan", st.Reconciles)
	}
	// The note written during the scan is in its listing or not, by where
	// the listing was when it landed (after its first _all_docs request, so
	// a later page or lookup may hold it); either way the scan counts what
	// it listed, all of it added, and the follower brings the rest.
	r := st.LastReconcile
	if r.Notes != len(edgeTexts) && r.Notes != len(edgeTexts)+1 {
		t.Errorf("the first scan listed %d notes, want %d, or %d with the note written during it", r.Notes, len(edgeTexts), len(edgeTexts)+1)
	}
	if r.Added != r.Notes || r.At.IsZero() || st.Scanning || st.ScanDone != st.ScanTotal || st.ScanTotal != r.Notes {
		t.Errorf("after the first scan: %+v", st)
	}
}

// A follower reconciles at start when the index's last run is older than
// the interval, and then every interval.
func TestFollowerReconcilesPeriodically(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadAllDocs(t, db, "testdata/edge.all_docs.json")
	c := mustConnect(t, couchOptions(srv, db))
	store := mustStore(t)
	ctx := context.Background()
	if _, err := NewReconciler(c, store.Feed()).Run(ctx, ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := fastOptions()
	opts.ReconcileInterval = time.Hour
	f := mustFollow(t, c, store, opts)
	waitCaughtUp(t, srv, db, f)
	if n := f.Stats().Reconciles; n != 0 {
		t.Fatalf("%d reconciles right after one ran, want 0", n)
	}
	closeFollower(t, f)

	if err := store.Feed().MarkRun(ctx, time.Now().Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	opts.ReconcileInterval = 300 * time.Millisecond
	f = mustFollow(t, c, store, opts)
	waitFor(t, 10*time.Second, "three reconciles", func() bool { return f.Stats().Reconciles >= 3 })
	note, chunk := liveNote("Later.md", "Still followed between reconciles.\n")
	bulk(t, srv, db, chunk, note)
	want := hashes(edgeTexts)
	want["Later.md"] = hashOf("Still followed between reconciles.\n")
	waitFor(t, 10*time.Second, "Later.md indexed", func() bool { return cmp.Equal(want, mustSnapshot(t, store).Docs) })
}

// A first scan says how far it is as it goes: after each _all_docs page how
// many documents are listed of the database's count, then, once listed,
// 0 of the listed notes, then after each transaction the notes written,
// which the index holds at that moment. The stats are read from the
// follower's own goroutine between pages and transactions, not by timing.
func TestFollowerFirstScanProgress(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	const notes, batch, page = 200, 30, 50
	var docs []map[string]any
	for i := range notes {
		n, c := liveNote(fmt.Sprintf("Notes/%03d.md", i), fmt.Sprintf("note number %d\n", i))
		docs = append(docs, c, n)
	}
	bulk(t, srv, db, docs...)
	store := mustStore(t)
	fo := fastOptions()
	fo.ScanPageSize, fo.ScanBatch = page, batch
	var seen []FollowerStats
	fo.OnScanProgress = func(st FollowerStats) {
		if st.ScanTotal > 0 {
			if n := len(mustSnapshot(t, store).Docs); n != st.ScanDone {
				t.Errorf("the scan says %d of %d notes written while the index holds %d", st.ScanDone, st.ScanTotal, n)
			}
		}
		seen = append(seen, st)
	}
	f := mustFollow(t, mustConnect(t, couchOptions(srv, db)), store, fo)
	waitCaughtUp(t, srv, db, f)
	closeFollower(t, f) // seen is the follower goroutine's until it stops

	var listed, written []string
	for _, st := range seen {
		if !st.Scanning {
			t.Errorf("progress outside the scan: %+v", st)
		}
		if st.ScanTotal == 0 {
			listed = append(listed, fmt.Sprintf("%d/%d", st.ScanListed, st.ScanDocuments))
		} else {
			written = append(written, fmt.Sprintf("%d/%d", st.ScanDone, st.ScanTotal))
		}
	}
	// 2 documents a note; a short page ends the listing.
	wantListed := []string{"50/400", "100/400", "150/400", "200/400", "250/400", "300/400", "350/400", "400/400", "400/400"}
	wantWritten := []string{"0/200", "30/200", "60/200", "90/200", "120/200", "150/200", "180/200", "200/200"}
	if diff := cmp.Diff(wantListed, listed); diff != "" {
		t.Errorf("listing progress (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantWritten, written); diff != "" {
		t.Errorf("writing progress (-want +got):\n%s", diff)
	}
}

// The feed counts as connected once its request is sent, not when the
// server sends the response's headers: CouchDB and the test server hold
// them back until the first row or heartbeat, so a quiet vault would show
// "connecting" for a whole heartbeat after every (re)connection.
func TestFollowerConnectedBeforeFirstHeartbeat(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	opts := couchOptions(srv, db)
	opts.Heartbeat = 2 * time.Minute
	f := mustFollow(t, mustConnect(t, opts), mustStore(t), fastOptions())
	waitFor(t, 20*time.Second, "the feed connected, long before its first heartbeat", func() bool { return f.Stats().Connected })
}
