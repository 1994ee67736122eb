package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/internal/retry"
)

// fakeCouch is the least of CouchDB a follower needs, for what the test
// server cannot do: end a continuous feed, drop it mid-line, go silent, or
// answer 400 to a malformed since. changes serves the n-th _changes request.
type fakeCouch struct {
	t         *testing.T
	updateSeq int
	docs      []string // _all_docs rows' documents
	changes   func(w http.ResponseWriter, r *http.Request, n int)
	// revsDiff, when set, is the status _revs_diff answers with.
	revsDiff int

	mu     sync.Mutex
	sinces []string
}

func (fc *fakeCouch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch p := r.URL.Path; {
	case p == "/db" && r.Method == http.MethodGet:
		fmt.Fprintf(w, `{"db_name":"db","update_seq":%d,"doc_count":%d}`, fc.updateSeq, len(fc.docs))
	case p == "/db/_changes":
		fc.mu.Lock()
		fc.sinces = append(fc.sinces, r.URL.Query().Get("since"))
		n := len(fc.sinces) - 1
		fc.mu.Unlock()
		fc.changes(w, r, n)
	case p == "/db/_all_docs" && r.Method == http.MethodGet && r.URL.Query().Get("startkey") == "":
		rows := make([]string, len(fc.docs))
		for i, d := range fc.docs {
			var id struct {
				ID string `json:"_id"`
			}
			_ = json.Unmarshal([]byte(d), &id)
			rows[i] = fmt.Sprintf(`{"id":%q,"key":%q,"value":{"rev":"1-a"},"doc":%s}`, id.ID, id.ID, d)
		}
		fmt.Fprintf(w, `{"total_rows":%d,"offset":0,"rows":[%s]}`, len(rows), strings.Join(rows, ","))
	case p == "/db/_all_docs":
		fmt.Fprintf(w, `{"total_rows":%d,"offset":0,"rows":[]}`, len(fc.docs))
	case p == "/db/_revs_diff" && r.Method == http.MethodPost && fc.revsDiff != 0:
		w.WriteHeader(fc.revsDiff)
		io.WriteString(w, `{"error":"forbidden","reason":"no POST here"}`)
	case p == "/db/_revs_diff" && r.Method == http.MethodPost:
		io.WriteString(w, `{}`) // it knows every revision: the same database throughout
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"not_found","reason":"missing"}`)
	}
}

func (fc *fakeCouch) requestedSinces() []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]string(nil), fc.sinces...)
}

// legacyRow is a _changes row of a note with inline text: it needs no chunk.
func legacyRow(seq int, path, text string) string {
	return fmt.Sprintf(`{"seq":%d,"id":%q,"changes":[{"rev":"1-a"}],"doc":%s}`, seq, strings.ToLower(path), legacyDoc(path, text))
}

func legacyDoc(path, text string) string {
	return fmt.Sprintf(`{"_id":%q,"_rev":"1-a","path":%q,"type":"notes","data":%q}`, strings.ToLower(path), path, text)
}

// stream starts a continuous feed response.
func stream(w http.ResponseWriter) {
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func writeLine(w http.ResponseWriter, line string) {
	io.WriteString(w, line+"\n")
	w.(http.Flusher).Flush()
}

// hang keeps the feed open until the client goes.
func hang(r *http.Request) { <-r.Context().Done() }

// followFake follows fc from checkpoint since (none: a full scan first).
func followFake(t *testing.T, fc *fakeCouch, since string, heartbeat time.Duration) (*Follower, *index.Store, *logBuffer, *sleepClock) {
	t.Helper()
	f, store, logs, sl := fakeFollower(t, fc, since, heartbeat)
	if err := f.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(context.Background()); err != nil {
			t.Errorf("follower stopped with: %v", err)
		}
	})
	return f, store, logs, sl
}

// fakeFollower is a follower of fc, not yet open.
func fakeFollower(t *testing.T, fc *fakeCouch, since string, heartbeat time.Duration) (*Follower, *index.Store, *logBuffer, *sleepClock) {
	t.Helper()
	srv := httptest.NewServer(fc)
	t.Cleanup(srv.Close)
	var logs logBuffer
	c := mustConnect(t, CouchOptions{URL: srv.URL, Database: "db", Corpus: testCorpus, Logger: logs.logger(), Heartbeat: heartbeat})
	store := mustStore(t)
	if since != "" {
		if _, err := store.Feed().Apply(context.Background(), index.Batch{Source: c.Source(), Checkpoint: since}); err != nil {
			t.Fatal(err)
		}
	}
	sl := &sleepClock{Clock: retry.System}
	opts := fastOptions()
	opts.Clock, opts.Jitter = sl, func() float64 { return 0.5 }
	opts.StableAfter = time.Hour // recovered only once a row arrives
	return NewFollower(c, store.Feed(), opts), store, &logs, sl
}

func waitIndexed(t *testing.T, store *index.Store, want map[string]string) {
	t.Helper()
	waitFor(t, 10*time.Second, fmt.Sprintf("%d notes indexed", len(want)), func() bool { return cmp.Equal(hashes(want), mustSnapshot(t, store).Docs) })
}

// Real CouchDB ends a continuous feed with a last_seq line on timeout or
// limit, which makes kivik v4.5.2 panic; the follower reconnects from its
// checkpoint and logs the failure once and the recovery once.
func TestFollowerSurvivesCleanStreamEnd(t *testing.T) {
	fc := &fakeCouch{t: t, updateSeq: 2, changes: func(w http.ResponseWriter, r *http.Request, n int) {
		stream(w)
		switch n {
		case 0:
			writeLine(w, legacyRow(1, "A.md", "alpha\n"))
			writeLine(w, `{"last_seq":1,"pending":1}`)
		default:
			writeLine(w, legacyRow(2, "B.md", "beta\n"))
			hang(r)
		}
	}}
	f, store, logs, sl := followFake(t, fc, "0", 0)
	waitIndexed(t, store, map[string]string{"A.md": "alpha\n", "B.md": "beta\n"})
	waitFor(t, 5*time.Second, "checkpoint 2", func() bool { return f.Stats().Checkpoint == "2" })
	if got := fc.requestedSinces(); !cmp.Equal(got[:2], []string{"0", "1"}) {
		t.Errorf("since of each connection = %v, want 0 then the committed 1", got)
	}
	if !strings.Contains(logs.String(), "changes feed ended") || logs.count("changes feed failed") != 1 || logs.count("changes feed recovered") != 1 {
		t.Errorf("want one failure (the feed's end) and one recovery logged:\n%s", logs)
	}
	if len(sl.all()) != 1 {
		t.Errorf("backoff waits %v, want one", sl.all())
	}
}

// A connection dropped in the middle of a row, and connections that fail
// again and again: reconnects back off exponentially with jitter, capped,
// and log one failure and one recovery.
func TestFollowerSurvivesDroppedConnection(t *testing.T) {
	fc := &fakeCouch{t: t, updateSeq: 2, changes: func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case n == 0:
			stream(w)
			writeLine(w, legacyRow(1, "A.md", "alpha\n"))
			io.WriteString(w, legacyRow(2, "B.md", "beta\n")[:30])
			w.(http.Flusher).Flush()
			abort(w)
		case n <= 4:
			abort(w) // refused before any response
		default:
			stream(w)
			writeLine(w, legacyRow(2, "B.md", "beta\n"))
			hang(r)
		}
	}}
	f, store, logs, sl := followFake(t, fc, "0", 0)
	waitIndexed(t, store, map[string]string{"A.md": "alpha\n", "B.md": "beta\n"})
	waitFor(t, 5*time.Second, "checkpoint 2", func() bool { return f.Stats().Checkpoint == "2" })
	if got := fc.requestedSinces(); !cmp.Equal(got, []string{"0", "1", "1", "1", "1", "1"}) {
		t.Errorf("since of each connection = %v, want 0 then the committed 1 each time", got)
	}
	// min 10ms, max 50ms, jitter 0.5: d/2 + d/4 for d = 10, 20, 40, 50, 50.
	want := []time.Duration{7500 * time.Microsecond, 15 * time.Millisecond, 30 * time.Millisecond, 37500 * time.Microsecond, 37500 * time.Microsecond}
	if diff := cmp.Diff(want, sl.all()); diff != "" {
		t.Errorf("backoff waits (-want +got):\n%s", diff)
	}
	if logs.count("changes feed failed") != 1 || logs.count("changes feed recovered") != 1 {
		t.Errorf("want one failure and one recovery logged:\n%s", logs)
	}
}

// abort closes the connection without finishing the response.
func abort(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

// A feed that goes silent (no heartbeat) for three heartbeats is dropped and
// re-opened rather than waited on forever.
func TestFollowerDropsSilentFeed(t *testing.T) {
	fc := &fakeCouch{t: t, updateSeq: 2, changes: func(w http.ResponseWriter, r *http.Request, n int) {
		stream(w)
		if n == 0 {
			writeLine(w, legacyRow(1, "A.md", "alpha\n"))
		} else {
			writeLine(w, legacyRow(2, "B.md", "beta\n"))
		}
		hang(r)
	}}
	_, store, _, _ := followFake(t, fc, "0", 50*time.Millisecond)
	waitIndexed(t, store, map[string]string{"A.md": "alpha\n", "B.md": "beta\n"})
	if got := fc.requestedSinces(); len(got) < 2 || got[1] != "1" {
		t.Errorf("since of each connection = %v, want a reconnect from 1", got)
	}
}

// CouchDB answers 400 to a since it cannot decode: the follower warns, runs
// a full reconcile and follows from a fresh checkpoint. If the fresh one is
// rejected too it stops with an error rather than loop.
func TestFollowerRejectedCheckpoint(t *testing.T) {
	badRequest := func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"bad_request","reason":"Malformed sequence supplied in 'since' parameter."}`)
	}
	t.Run("reconcile", func(t *testing.T) {
		// The server's sequence is past the foreign checkpoint's number, so
		// only the 400 says the checkpoint is not this database's.
		fc := &fakeCouch{t: t, updateSeq: 70, docs: []string{legacyDoc("A.md", "alpha\n")}}
		fc.changes = func(w http.ResponseWriter, r *http.Request, n int) {
			if r.URL.Query().Get("since") != "70" {
				badRequest(w)
				return
			}
			stream(w)
			hang(r)
		}
		f, store, logs, _ := followFake(t, fc, "12-g1AAAAforeign", 0)
		waitIndexed(t, store, map[string]string{"A.md": "alpha\n"})
		waitFor(t, 5*time.Second, "a fresh checkpoint", func() bool { return f.Stats().Checkpoint == "70" })
		if st, _, _ := store.Feed().Checkpoint(context.Background(), f.couch.source); st.Since != "70" {
			t.Errorf("saved checkpoint %q, want 70", st.Since)
		}
		if !strings.Contains(logs.String(), "rejected the checkpoint") {
			t.Errorf("no warning:\n%s", logs)
		}
	})
	t.Run("rejected again", func(t *testing.T) {
		fc := &fakeCouch{t: t, updateSeq: 7, changes: func(w http.ResponseWriter, r *http.Request, n int) { badRequest(w) }}
		f, _, _, _ := fakeFollower(t, fc, "garbage", 0)
		if err := f.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		select {
		case <-f.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the follower keeps going with a server that rejects every since")
		}
		err := f.Close(context.Background())
		if err == nil || !strings.Contains(err.Error(), "rejects the sequence") {
			t.Fatalf("follower stopped with %v", err)
		}
	})
}

// A server (or a proxy before it) that refuses POST _revs_diff does not stop
// the feed: the check of the database goes on by identity and sequence,
// with one warning.
func TestFollowerWithoutRevsDiff(t *testing.T) {
	fc := &fakeCouch{t: t, updateSeq: 2, revsDiff: http.StatusForbidden, changes: func(w http.ResponseWriter, r *http.Request, n int) {
		stream(w)
		switch n {
		case 0:
			writeLine(w, legacyRow(1, "A.md", "alpha\n"))
			writeLine(w, `{"last_seq":1,"pending":1}`)
		default:
			writeLine(w, legacyRow(2, "B.md", "beta\n"))
			hang(r)
		}
	}}
	f, store, logs, _ := followFake(t, fc, "0", 0)
	waitIndexed(t, store, map[string]string{"A.md": "alpha\n", "B.md": "beta\n"})
	waitFor(t, 5*time.Second, "checkpoint 2", func() bool { return f.Stats().Checkpoint == "2" })
	if logs.count("refused POST _revs_diff") != 1 || logs.count("changes feed failed") != 1 {
		t.Errorf("want one warning of the refused _revs_diff and one failure (the feed's end):\n%s", logs)
	}
}
