package feed

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/internal/retry"
	"github.com/vaultask/vaultask/tstest/couchtest"
)

// recreate deletes db and creates it again, empty, as LiveSync's "rebuild
// remote" does. A request that reaches the test server while it deletes a
// database can go unanswered (express-pouchdb), so the followers of these
// tests use recreateHeartbeat: such a request fails after three silent
// heartbeats and is retried, as it would be after 30 s by default.
func recreate(tb testing.TB, srv *couchtest.Server, db string) {
	tb.Helper()
	request(tb, srv, http.MethodDelete, db, nil, nil)
	// The test server may still be deleting it, or may have created it
	// again for a reader already (PouchDB creates a database on first use).
	waitFor(tb, 5*time.Second, "the database to be created again", func() bool {
		var info struct {
			DocCount int `json:"doc_count"`
		}
		if err := tryRequest(srv, http.MethodPut, db); err == nil {
			return true
		}
		request(tb, srv, http.MethodGet, db, nil, &info)
		return info.DocCount == 0
	})
}

// recreateHeartbeat is the heartbeat of a follower whose database is
// recreated under it.
const recreateHeartbeat = 200 * time.Millisecond

// followCaughtUp starts a follower of db, whose database the test recreates,
// into a fresh index with its log kept (and printed if the test fails), and
// waits until it has caught up.
func followCaughtUp(tb testing.TB, srv *couchtest.Server, db string) (*Follower, *index.Store, *logBuffer) {
	tb.Helper()
	logs := &logBuffer{}
	logs.dumpOnFailure(tb)
	opts := couchOptions(srv, db)
	opts.Logger, opts.Heartbeat = logs.logger(), recreateHeartbeat
	store := mustStore(tb)
	f := mustFollow(tb, mustConnect(tb, opts), store, checkingOptions())
	waitCaughtUp(tb, srv, db, f)
	return f, store, logs
}

// tryRequest sends a request without a body as the test server's admin and
// returns an error for a status of 400 or more.
func tryRequest(srv *couchtest.Server, method, path string) error {
	req, err := http.NewRequest(method, srv.URL+"/"+path, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(srv.User, srv.Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return nil
}

// checkingOptions make a follower check the database, and confirm mass
// removals, within milliseconds.
func checkingOptions() FollowerOptions {
	opts := fastOptions()
	opts.CheckInterval = 20 * time.Millisecond
	opts.ConfirmDelay = 20 * time.Millisecond
	return opts
}

// A database recreated under the follower, its sequence starting over, is
// noticed: the follower warns and reconciles it from scratch instead of
// waiting forever past the new update_seq, and the notes of the old database
// go. Removing every note is a mass removal, confirmed by a second listing
// and warned of with its count.
func TestFollowerNoticesRecreatedDatabase(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	threeOldNotes(t, srv, db)
	f, store, logs := followCaughtUp(t, srv, db)

	recreate(t, srv, db)
	n, c := liveNote("New/Only.md", "the rebuilt vault\n")
	bulk(t, srv, db, c, n)

	want := map[string]string{"New/Only.md": hashOf("the rebuilt vault\n")}
	waitFor(t, 10*time.Second, "the recreated database's notes, and only those", func() bool {
		return cmp.Equal(want, mustSnapshot(t, store).Docs)
	})
	waitCaughtUp(t, srv, db, f)
	// Its sequence, or its revisions if a check comes while it is rewritten,
	// give it away.
	for _, line := range []string{"so it was recreated or restored: reconciling it from scratch", "would remove more than half", "two listings agree"} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("no log line with %q:\n%s", line, logs.String())
		}
	}
	if line := logLine(logs.String(), "removing more than half of the indexed notes"); !strings.Contains(line, "level=WARN") || !strings.Contains(line, "removed=3 total=3") {
		t.Errorf("the mass removal is not warned of with its count: %q", line)
	}
}

// A database LiveSync rebuilt carries a new milestone: even when its
// sequence is already past the checkpoint, the follower sees another
// database and reconciles. The follower is stopped while the database is
// rebuilt, so that its milestone, not a check in the middle of the rebuild
// (which may see the old milestone and the new revisions), gives it away.
func TestFollowerNoticesNewLiveSyncIdentity(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadFixture(t, db, fixtures, "vault")
	var logs logBuffer
	logs.dumpOnFailure(t)
	opts := couchOptions(srv, db)
	opts.Logger, opts.Heartbeat = logs.logger(), recreateHeartbeat
	store := mustStore(t)
	c := mustConnect(t, opts)
	f := NewFollower(c, store.Feed(), checkingOptions())
	if err := f.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close(context.Background()) }) // when the test stops before closeFollower
	waitCaughtUp(t, srv, db, f)
	if n := len(mustSnapshot(t, store).Docs); n != 2 {
		t.Fatalf("fixture indexed to %d notes, want 2", n)
	}
	closeFollower(t, f)

	// The rebuilt remote: a fresh milestone, and more documents than
	// before, so the sequence alone says nothing.
	rebuildWithNewSetup(t, srv, db)
	var docs []map[string]any
	want := map[string]string{}
	for i := range 12 {
		p := "Rebuilt/Note " + string(rune('A'+i)) + ".md"
		n, c := liveNote(p, "rebuilt "+p+"\n")
		docs = append(docs, c, n)
		want[p] = hashOf("rebuilt " + p + "\n")
	}
	bulk(t, srv, db, docs...)

	mustFollow(t, c, store, checkingOptions())
	waitFor(t, 10*time.Second, "the rebuilt database's notes, and only those", func() bool {
		return cmp.Equal(want, mustSnapshot(t, store).Docs)
	})
	if !strings.Contains(logs.String(), "the database is not the one the checkpoint was taken in (its LiveSync setup is another") {
		t.Errorf("no warning that the database was recreated:\n%s", logs.String())
	}
}

// A reconcile that would remove most notes waits and lists again: a client
// that is still uploading the vault (here, during the wait) keeps its
// notes, and only what both listings lack is removed.
func TestReconcileConfirmsMassRemoval(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	notes := map[string]map[string]any{}
	chunks := map[string]map[string]any{}
	var docs []map[string]any
	for _, p := range []string{"A.md", "B.md", "C.md", "D.md"} {
		notes[p], chunks[p] = liveNote(p, "note "+p+"\n")
		docs = append(docs, chunks[p], notes[p])
	}
	bulk(t, srv, db, docs...)
	var logs logBuffer
	opts := couchOptions(srv, db)
	opts.Logger = logs.logger()
	c := mustConnect(t, opts)
	store := mustStore(t)
	r := NewReconciler(c, store.Feed())
	if _, err := r.Run(context.Background(), ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}

	recreate(t, srv, db)
	bulk(t, srv, db, chunks["A.md"], notes["A.md"])
	waited := 0
	r.ConfirmDelay = time.Hour
	r.Clock = &sleepClock{Clock: retry.System, onSleep: func(d time.Duration) {
		if d != time.Hour {
			t.Errorf("slept %v, want the ConfirmDelay", d)
		}
		waited++
		bulk(t, srv, db, chunks["B.md"], notes["B.md"], chunks["C.md"], notes["C.md"])
	}}
	res, err := r.Run(context.Background(), ReconcileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if waited != 1 || len(res.Plan.Remove) != 1 {
		t.Fatalf("waited %d times, removed %v; want one wait and only D.md removed", waited, res.Plan.Remove)
	}
	want := map[string]string{"A.md": hashOf("note A.md\n"), "B.md": hashOf("note B.md\n"), "C.md": hashOf("note C.md\n")}
	if diff := cmp.Diff(want, mustSnapshot(t, store).Docs); diff != "" {
		t.Errorf("index (-want +got):\n%s", diff)
	}
	if line := logLine(logs.String(), "would remove more than half"); !strings.Contains(line, "level=WARN") || !strings.Contains(line, "removed=3 total=4") {
		t.Errorf("no warning with the count: %q", line)
	}
}

// Failures are warned of when their kind changes, in words a user acts on,
// and the recovery is logged once and clears the error: here, a password changed under the
// follower and changed back.
func TestFollowerWarnsOfEachKindOfFailure(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	user := strings.ReplaceAll(db, "-", "_")
	userDoc := map[string]any{"_id": "org.couchdb.user:" + user, "name": user, "password": "first", "roles": []string{}, "type": "user"}
	put(t, srv, "_users", userDoc)
	request(t, srv, http.MethodPut, db+"/_security", map[string]any{"members": map[string]any{"names": []string{user}}, "admins": map[string]any{}}, nil)
	n, c := liveNote("Note.md", "text\n")
	bulk(t, srv, db, c, n)

	var logs logBuffer
	opts := couchOptions(srv, db)
	opts.User, opts.Password, opts.Logger = user, "first", logs.logger()
	fo := checkingOptions()
	f := mustFollow(t, mustConnect(t, opts), mustStore(t), fo)
	waitCaughtUp(t, srv, db, f)

	setPassword := func(pw string) {
		doc := getDoc(t, srv, "_users", "org.couchdb.user:"+user)
		doc["password"] = pw
		put(t, srv, "_users", doc)
	}
	setPassword("second")
	rejected := `CouchDB rejected the credentials for user \"` + user + `\" (401 unauthorized)`
	waitFor(t, 10*time.Second, "a warning about the rejected password", func() bool { return strings.Contains(logs.String(), rejected) })
	waitFor(t, 10*time.Second, "several retries", func() bool { return f.Stats().Reconnects >= 3 })
	if got := logs.count(rejected); got != 1 {
		t.Errorf("the rejected password was warned of %d times over %d retries, want once:\n%s", got, f.Stats().Reconnects, logs.String())
	}
	if st := f.Stats(); !st.Failing || !strings.Contains(st.LastError, "rejected the credentials") {
		t.Errorf("stats while failing: %+v", st)
	}
	setPassword("first")
	waitFor(t, 10*time.Second, "the recovery", func() bool { return strings.Contains(logs.String(), "changes feed recovered") })

	if got := logs.count("changes feed recovered"); got != 1 {
		t.Errorf("recovered logged %d times, want once", got)
	}
	if st := f.Stats(); st.Failing || st.LastError != "" || st.LastErrorAt.IsZero() {
		t.Errorf("stats after the recovery: failing %v, last error %q at %v; want the error cleared and its time kept", st.Failing, st.LastError, st.LastErrorAt)
	}
	request(t, srv, http.MethodDelete, "_users/"+url.PathEscape("org.couchdb.user:"+user)+"?rev="+url.QueryEscape(getDoc(t, srv, "_users", "org.couchdb.user:"+user)["_rev"].(string)), nil, nil)
}

// Each failure a follower meets is described in words a user acts on. The
// errors are the real ones: kivik's, from requests to the test server and to
// a port nothing listens on.
func TestDescribeFailures(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	c := mustConnect(t, couchOptions(srv, db))
	ctx := context.Background()

	missing := &Couch{db: c.client.DB("no-such-db-here"), root: c.root, user: c.user, heartbeat: c.heartbeat}
	_, err := missing.updateSeq(ctx)
	if fl := missing.describe(err); fl.kind != failNoDatabase || !strings.Contains(fl.text, `database "no-such-db-here" does not exist at `+srv.URL+" (404 not found)") {
		t.Errorf("missing database: %+v (from %v)", fl, err)
	}

	wrong := couchOptions(srv, db)
	wrong.Password = "wrong"
	_, err = Connect(ctx, wrong)
	if fl := c.describe(err); fl.kind != failUnauthorized || !strings.Contains(fl.text, `rejected the credentials for user "admin"`) {
		t.Errorf("wrong password: %+v (from %v)", fl, err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	down := couchOptions(srv, db)
	down.URL = closed
	_, err = Connect(ctx, down)
	if fl := c.describe(err); fl.kind != failUnreachable || !strings.Contains(fl.text, "connection refused") {
		t.Errorf("nothing listening: %+v (from %v)", fl, err)
	}

	if fl := c.describe(fmt.Errorf("read changes: %w", io.ErrUnexpectedEOF)); fl.kind != failDropped || !strings.Contains(fl.text, "was closed") {
		t.Errorf("dropped connection: %+v", fl)
	}
	if fl := c.describe(fmt.Errorf("read: %w", os.ErrDeadlineExceeded)); fl.kind != failSilent || !strings.Contains(fl.text, "not even a heartbeat") {
		t.Errorf("silent connection: %+v", fl)
	}
}

// logLine is the first line of logs holding msg, "" when there is none.
// logLines counts the lines of logs that hold every one of parts.
func logLines(logs string, parts ...string) int {
	n := 0
	for line := range strings.Lines(logs) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			n++
		}
	}
	return n
}

func logLine(logs, msg string) string {
	for line := range strings.Lines(logs) {
		if strings.Contains(line, msg) {
			return line
		}
	}
	return ""
}

// checkClock is the system clock, except that the timers of the follower's
// database check (those of duration every) fire only when fire is called:
// a test decides when the check runs, whatever the machine's speed.
type checkClock struct {
	retry.Clock
	every  time.Duration
	mu     sync.Mutex
	timers []*manualTimer
}

func (c *checkClock) NewTimer(d time.Duration) retry.Timer {
	if d != c.every {
		return c.Clock.NewTimer(d)
	}
	t := &manualTimer{c: make(chan time.Time, 1)}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return t
}

// fire makes every check timer armed now fire.
func (c *checkClock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if !t.stopped.Load() {
			select {
			case t.c <- time.Now():
			default:
			}
		}
	}
}

type manualTimer struct {
	c       chan time.Time
	stopped atomic.Bool
}

func (t *manualTimer) C() <-chan time.Time      { return t.c }
func (t *manualTimer) Stop() bool               { return !t.stopped.Swap(true) }
func (t *manualTimer) Reset(time.Duration) bool { return !t.stopped.Swap(false) }

// recreateAtSeq recreates db with the notes of paths, written in one
// request so that no reader sees it half full, and fails the test unless its
// sequence is exactly seq (the premise of the tests that use it).
func recreateAtSeq(tb testing.TB, srv *couchtest.Server, db, seq string, paths ...string) map[string]string {
	tb.Helper()
	recreate(tb, srv, db)
	want := map[string]string{}
	var docs []map[string]any
	for _, p := range paths {
		n, c := liveNote(p, "rebuilt "+p+"\n")
		docs = append(docs, c, n)
		want[p] = hashOf("rebuilt " + p + "\n")
	}
	bulk(tb, srv, db, docs...)
	if now, _ := srv.DBInfo(tb, db); now != seq {
		tb.Fatalf("the recreated database is at sequence %s, want the checkpoint's %s", now, seq)
	}
	return want
}

// waitConnected waits until the follower has caught up and its feed is
// open: its check at connecting is behind it.
func waitConnected(tb testing.TB, srv *couchtest.Server, db string, f *Follower) {
	tb.Helper()
	waitCaughtUp(tb, srv, db, f)
	waitFor(tb, 30*time.Second, "the feed to open", func() bool { return f.Stats().Connected })
}

// threeOldNotes writes three notes to db and returns its sequence.
func threeOldNotes(tb testing.TB, srv *couchtest.Server, db string) string {
	tb.Helper()
	var docs []map[string]any
	for _, p := range []string{"Old/One.md", "Old/Two.md", "Old/Three.md"} {
		n, c := liveNote(p, "old note "+p+"\n")
		docs = append(docs, c, n)
	}
	bulk(tb, srv, db, docs...)
	seq, _ := srv.DBInfo(tb, db)
	return seq
}

// A database recreated while the feed stays connected, and written up to
// exactly the checkpoint's sequence, looks the same by its sequence (and by
// its LiveSync identity, which it has none of here): the check sees that
// the revisions the index holds are unknown to it, and the follower
// reconciles at that check, not at the hourly reconcile.
func TestFollowerNoticesRecreationAtTheCheckpointsSequence(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	seq := threeOldNotes(t, srv, db)
	var logs logBuffer
	opts := couchOptions(srv, db)
	opts.Logger, opts.Heartbeat = logs.logger(), recreateHeartbeat
	store := mustStore(t)
	fo := checkingOptions()
	fo.CheckInterval = 10 * time.Second
	clock := &checkClock{Clock: retry.System, every: fo.CheckInterval}
	fo.Clock = clock
	f := mustFollow(t, mustConnect(t, opts), store, fo)
	waitConnected(t, srv, db, f)

	want := recreateAtSeq(t, srv, db, seq, "New/A.md", "New/B.md", "New/C.md")
	clock.fire()
	waitFor(t, 10*time.Second, "the recreated database's notes, and only those", func() bool {
		return cmp.Equal(want, mustSnapshot(t, store).Docs)
	})
	if !strings.Contains(logs.String(), "does not know the revisions the index holds") {
		t.Errorf("no warning that the database was recreated:\n%s", logs.String())
	}
}

// The same recreation while the follower is stopped is noticed when it
// connects again.
func TestFollowerNoticesRecreationAtTheCheckpointsSequenceOnConnect(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	seq := threeOldNotes(t, srv, db)
	store := mustStore(t)
	c := mustConnect(t, couchOptions(srv, db))
	f := NewFollower(c, store.Feed(), checkingOptions())
	if err := f.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, srv, db, f)
	closeFollower(t, f)

	want := recreateAtSeq(t, srv, db, seq, "New/A.md", "New/B.md", "New/C.md")
	fo := checkingOptions()
	fo.CheckInterval = time.Hour
	mustFollow(t, c, store, fo)
	waitFor(t, 10*time.Second, "the recreated database's notes, and only those", func() bool {
		return cmp.Equal(want, mustSnapshot(t, store).Docs)
	})
}

// A database recreated with a lower sequence is noticed at the first check,
// which by default comes within 10 s (here the test fires the 10 s timer).
func TestFollowerChecksTheDatabaseEveryTenSeconds(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	threeOldNotes(t, srv, db)
	store := mustStore(t)
	fo := checkingOptions()
	fo.CheckInterval = 0
	clock := &checkClock{Clock: retry.System, every: 10 * time.Second}
	fo.Clock = clock
	opts := couchOptions(srv, db)
	opts.Heartbeat = recreateHeartbeat
	f := mustFollow(t, mustConnect(t, opts), store, fo)
	waitConnected(t, srv, db, f)

	recreate(t, srv, db)
	n, c := liveNote("New/Only.md", "the rebuilt vault\n")
	bulk(t, srv, db, c, n)
	clock.fire()
	want := map[string]string{"New/Only.md": hashOf("the rebuilt vault\n")}
	waitFor(t, 10*time.Second, "the recreated database's notes, and only those", func() bool {
		return cmp.Equal(want, mustSnapshot(t, store).Docs)
	})
}

// A database recreated and still empty when the follower reconciles it
// (LiveSync's "rebuild remote" between deleting and uploading) leaves the
// index as it is: the reconcile writes nothing and fails with why, warned
// of once, and the follower reconciles again, with backoff, until notes
// appear; then the old notes go and the new ones come. Here the reconcile
// of the empty database is waited for, which in the other recreation tests
// is a race with the upload.
func TestFollowerWaitsOutAnEmptyRecreatedDatabase(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	threeOldNotes(t, srv, db)
	f, store, logs := followCaughtUp(t, srv, db)
	old := mustSnapshot(t, store).Docs

	recreate(t, srv, db)
	empty := "lists no notes at all"
	waitFor(t, 10*time.Second, "the follower to report the database empty", func() bool {
		st := f.Stats()
		return st.Failing && strings.Contains(st.LastError, empty)
	})
	if st := f.Stats(); !strings.Contains(st.LastError, "the 3 indexed notes are kept") {
		t.Errorf("the failure does not say what is kept: %q", st.LastError)
	}
	waitFor(t, 10*time.Second, "a second reconcile to find it empty", func() bool {
		return logLines(logs.String(), "changes feed still failing", empty) > 0
	})
	if diff := cmp.Diff(old, mustSnapshot(t, store).Docs); diff != "" {
		t.Errorf("the index changed while the database was empty (-before +after):\n%s", diff)
	}
	if warned := logLines(logs.String(), "level=WARN", empty); warned != 1 {
		t.Errorf("the empty database was warned of %d times, want once", warned)
	}
	if n := logs.count("level=WARN msg=\"a reconcile would remove more than half"); n != 0 {
		t.Errorf("the reconciles of the empty database warned %d times of a mass removal; its failure is the one warning", n)
	}

	n, c := liveNote("New/Only.md", "the rebuilt vault\n")
	bulk(t, srv, db, c, n)
	want := map[string]string{"New/Only.md": hashOf("the rebuilt vault\n")}
	waitFor(t, 10*time.Second, "the rebuilt database's notes, and only those", func() bool {
		return cmp.Equal(want, mustSnapshot(t, store).Docs)
	})
	waitFor(t, 10*time.Second, "the recovery", func() bool { return !f.Stats().Failing })
	if !strings.Contains(logs.String(), "two listings agree") {
		t.Errorf("the old notes went without a second listing")
	}
}

// A first scan of a database that lists no notes, into an index that holds
// some, keeps them and ends, with its checkpoint (the benchmark's follower
// starts so, beside an index of other notes).
func TestFirstScanOfAnEmptyDatabaseEnds(t *testing.T) {
	srv := couchtest.Start(t)
	full, empty := srv.NewDB(t), srv.NewDB(t)
	threeOldNotes(t, srv, full)
	store := mustStore(t)
	if _, err := NewReconciler(mustConnect(t, couchOptions(srv, full)), store.Feed()).Run(context.Background(), ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	old := mustSnapshot(t, store).Docs
	var logs logBuffer
	logs.dumpOnFailure(t)
	opts := couchOptions(srv, empty)
	opts.Logger = logs.logger()
	f := mustFollow(t, mustConnect(t, opts), store, checkingOptions())
	waitFor(t, 10*time.Second, "the first scan to end", func() bool { return f.Stats().Reconciles >= 1 })
	if diff := cmp.Diff(old, mustSnapshot(t, store).Docs); diff != "" {
		t.Errorf("the first scan of an empty database changed the index (-before +after):\n%s", diff)
	}
}
