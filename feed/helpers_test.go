package feed

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/internal/retry"
	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/tstest/syncbuf"
	"github.com/vaultask/vaultask/vault"
)

func TestMain(m *testing.M) { os.Exit(couchtest.Main(m)) }

// passphrase is the E2EE passphrase of the vaultenc fixture and the help-enc
// corpus.
const passphrase = "correct horse battery staple"

// fixtures holds the LiveSync fixtures (vault, vaultenc) beside the decoder.
const fixtures = "livesync/testdata"

var testCorpus = Corpus{Include: []string{"**/*.md"}, Exclude: []string{"00 inbox/**"}}

// mustStore opens a fresh index in a temporary directory.
func mustStore(tb testing.TB) *index.Store {
	tb.Helper()
	return mustOpenStore(tb, filepath.Join(tb.TempDir(), "index.db"))
}

func mustOpenStore(tb testing.TB, path string) *index.Store {
	tb.Helper()
	s, err := index.Open(context.Background(), index.Options{Path: path, Space: vault.EmbeddingSpace{Model: "test/fixed", Dim: 4}, Logger: quietLogger()})
	if err != nil {
		tb.Fatalf("open index: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// logBuffer collects log output, safe for the follower's goroutine.
type logBuffer struct{ syncbuf.Buffer }

func (b *logBuffer) count(s string) int { return strings.Count(b.String(), s) }

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// dumpOnFailure prints what was logged when tb fails: a follower's story
// is in its log.
func (b *logBuffer) dumpOnFailure(tb testing.TB) {
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("the follower's log:\n%s", b.String())
		}
	})
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// couchOptions reaches db on the test server as its admin.
func couchOptions(srv *couchtest.Server, db string) CouchOptions {
	return CouchOptions{URL: srv.URL, Database: db, User: srv.User, Password: srv.Password, Corpus: testCorpus, Logger: quietLogger()}
}

func mustConnect(tb testing.TB, opts CouchOptions) *Couch {
	tb.Helper()
	c, err := Connect(context.Background(), opts)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// fastOptions make a follower react within milliseconds.
func fastOptions() FollowerOptions {
	return FollowerOptions{
		BatchQuiet: 2 * time.Millisecond, BatchWindow: 10 * time.Millisecond, ParkRetry: 20 * time.Millisecond, ParkTimeout: 300 * time.Millisecond,
		BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond, StableAfter: 100 * time.Millisecond,
	}
}

// mustFollow opens a follower that the test's cleanup stops; it fails the
// test if the follower stopped with an error.
func mustFollow(tb testing.TB, c *Couch, store *index.Store, opts FollowerOptions) *Follower {
	tb.Helper()
	f := NewFollower(c, store.Feed(), opts)
	if err := f.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.Close(ctx); err != nil {
			tb.Errorf("follower stopped with: %v", err)
		}
	})
	return f
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitCaughtUp waits until the follower's checkpoint is the database's
// update_seq.
func waitCaughtUp(tb testing.TB, srv *couchtest.Server, db string, f *Follower) {
	tb.Helper()
	seq, _ := srv.DBInfo(tb, db)
	deadline := time.Now().Add(30 * time.Second)
	for f.Stats().Checkpoint != seq {
		select {
		case <-f.Done():
			tb.Fatalf("follower stopped: %v", f.life.Err())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after 30s waiting for the follower to reach seq %s: %+v", seq, f.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hashOf is the content hash the index keeps for a note's text.
func hashOf(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// hashes maps each expected path to the hash of its text.
func hashes(texts map[string]string) map[string]string {
	out := make(map[string]string, len(texts))
	for p, t := range texts {
		out[p] = hashOf(t)
	}
	return out
}

// snapshot is what makes two indexes equal: every note's path and content
// hash, and every chunk id.
type snapshot struct {
	Docs   map[string]string
	Chunks []string
}

func mustSnapshot(tb testing.TB, store *index.Store) snapshot {
	tb.Helper()
	db := mustSQL(tb, store)
	s := snapshot{Docs: map[string]string{}}
	rows, err := db.Query(`SELECT path, content_hash FROM docs`)
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var p, h string
		if err := rows.Scan(&p, &h); err != nil {
			tb.Fatal(err)
		}
		s.Docs[p] = h
	}
	rows.Close()
	rows, err = db.Query(`SELECT chunk_id FROM chunks ORDER BY chunk_id`)
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			tb.Fatal(err)
		}
		s.Chunks = append(s.Chunks, id)
	}
	rows.Close()
	return s
}

// mustSQL opens a read-only connection to the store's file.
func mustSQL(tb testing.TB, store *index.Store) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+url.PathEscape(store.Path())+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// mustStatuses maps each note waiting to be indexed (pending or
// incomplete) to its state.
func mustStatuses(tb testing.TB, store *index.Store) map[string]string {
	tb.Helper()
	sts, err := store.Feed().NoteStatuses(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for _, st := range sts {
		if st.State != vault.StatusSkipped {
			out[st.Path] = st.State
		}
	}
	return out
}

// mustSkipped maps each skipped document's path to the reason.
func mustSkipped(tb testing.TB, store *index.Store) map[string]string {
	tb.Helper()
	sts, err := store.Feed().NoteStatuses(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for _, st := range sts {
		if st.State == vault.StatusSkipped {
			out[st.Path] = st.Reason
		}
	}
	return out
}

// edgeSkipped is why the documents of testdata/edge.all_docs.json that are
// notes but not indexed are skipped.
var edgeSkipped = map[string]string{
	"00 inbox/Draft.md":     `outside the corpus: excluded by the glob "00 inbox/**"`,
	"Attachments/pixel.png": "binary attachment: only text notes are indexed",
	"diagram.svg":           `outside the corpus: matches none of the include globs ["**/*.md"]`,
}

// allDocRows reads an _all_docs dump's docs (gzipped when the name ends in
// .gz) as change rows, in the dump's order.
func allDocRows(tb testing.TB, path string) []couchtest.ChangeRow {
	tb.Helper()
	var dump struct {
		Rows []struct {
			ID  string          `json:"id"`
			Doc json.RawMessage `json:"doc"`
		} `json:"rows"`
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			tb.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
	}
	if err := json.Unmarshal(raw, &dump); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	rows := make([]couchtest.ChangeRow, len(dump.Rows))
	for i, r := range dump.Rows {
		rows[i] = couchtest.ChangeRow{ID: r.ID, Doc: r.Doc}
	}
	return rows
}

// notesFirst orders rows as LiveSync's worst case: every note before any
// chunk.
func notesFirst(rows []couchtest.ChangeRow) []couchtest.ChangeRow {
	out := append([]couchtest.ChangeRow(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool { return !isLeaf(out[i]) && isLeaf(out[j]) })
	return out
}

func isLeaf(r couchtest.ChangeRow) bool {
	var doc struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(r.Doc, &doc) == nil && doc.Type == "leaf"
}

// request sends a JSON request to the test server as its admin and decodes
// the answer into out (when not nil).
func request(tb testing.TB, srv *couchtest.Server, method, path string, body, out any) {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, srv.URL+"/"+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.SetBasicAuth(srv.User, srv.Password)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		tb.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			tb.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// put writes one document the way a client does (new_edits on) and returns
// its new revision.
func put(tb testing.TB, srv *couchtest.Server, db string, doc map[string]any) string {
	tb.Helper()
	var res struct {
		Rev string `json:"rev"`
	}
	request(tb, srv, http.MethodPut, db+"/"+url.PathEscape(doc["_id"].(string)), doc, &res)
	return res.Rev
}

// bulk writes documents in one _bulk_docs request (new_edits on), as
// LiveSync pushes a chunk and its note together.
func bulk(tb testing.TB, srv *couchtest.Server, db string, docs ...map[string]any) {
	tb.Helper()
	request(tb, srv, http.MethodPost, db+"/_bulk_docs", map[string]any{"docs": docs}, nil)
}

// revs maps every document id of db to its revision.
func revs(tb testing.TB, srv *couchtest.Server, db string) map[string]string {
	tb.Helper()
	var res struct {
		Rows []struct {
			ID    string `json:"id"`
			Value struct {
				Rev string `json:"rev"`
			} `json:"value"`
		} `json:"rows"`
	}
	request(tb, srv, http.MethodGet, db+"/_all_docs", nil, &res)
	out := map[string]string{}
	for _, r := range res.Rows {
		out[r.ID] = r.Value.Rev
	}
	return out
}

// liveNote is a LiveSync note document of text in one content-addressed
// chunk, and that chunk.
func liveNote(path, text string) (note, chunk map[string]any) {
	chunkID := "h:" + hashOf(text)[:13]
	chunk = map[string]any{"_id": chunkID, "type": "leaf", "data": text}
	note = map[string]any{"_id": strings.ToLower(path), "path": path, "type": "plain", "children": []string{chunkID},
		"ctime": 1764480000000, "mtime": 1764480000000, "size": len(text), "eden": map[string]any{}}
	return note, chunk
}

// recorder remembers every request a recording proxy forwards; after, when
// set, runs once each request has been answered.
type recorder struct {
	next  string
	after func(method, path string)
	mu    sync.Mutex
	reqs  []string
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

// newRecordingProxy starts a proxy to rec.next that records each request's
// method and path, and returns its URL.
func newRecordingProxy(tb testing.TB, rec *recorder) string {
	tb.Helper()
	target, err := url.Parse(rec.next)
	if err != nil {
		tb.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a follower's cancelled feed is no error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, r.Method+" "+r.URL.Path)
		rec.mu.Unlock()
		proxy.ServeHTTP(w, r)
		if rec.after != nil {
			rec.after(r.Method, r.URL.Path)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// sleepClock is the system clock whose Sleep returns at once: it records
// each wait (a backoff's, a reconcile's confirm delay) and runs onSleep, if
// set, before returning.
type sleepClock struct {
	retry.Clock
	onSleep func(d time.Duration)
	mu      sync.Mutex
	d       []time.Duration
}

func (s *sleepClock) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	if s.onSleep != nil {
		s.onSleep(d)
	}
	return ctx.Err()
}

func (s *sleepClock) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}
