package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/tstest/smallvault"
)

func TestReadiness(t *testing.T) {
	var st atomic.Value
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", Scanning: true, ScanDone: 1200, ScanTotal: 6500}, Index: IndexStatus{Notes: 1200, EmbeddingBacklog: 4000}})
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{Status: func(context.Context) Status { return st.Load().(Status) }})
	check := func(wantCode int, wantMissing string, wantFeed string) {
		t.Helper()
		resp := do(t, http.MethodGet, hs.URL+"/readyz", nil)
		var body struct {
			Ready            bool     `json:"ready"`
			Feed             string   `json:"feed"`
			FeedError        string   `json:"feed_error"`
			Missing          []string `json:"missing"`
			Notes            int      `json:"notes"`
			EmbeddingBacklog int      `json:"embedding_backlog"`
			Serving          string   `json:"serving"`
		}
		decode(t, resp, &body)
		if resp.StatusCode != wantCode || body.Ready != (wantCode == http.StatusOK) || body.Feed != wantFeed {
			t.Fatalf("/readyz %d %+v, want %d and feed %q", resp.StatusCode, body, wantCode, wantFeed)
		}
		st := st.Load().(Status)
		if st.Feed.Failing != (body.FeedError != "") || st.Feed.ErrorKind != "" && !strings.HasPrefix(body.FeedError, st.Feed.ErrorKind) {
			t.Fatalf("/readyz feed_error %q while the feed's state is %+v", body.FeedError, st.Feed)
		}
		for _, private := range []string{"http://x", `"sync"`, `"vault"`, "/vault"} {
			if raw, _ := json.Marshal(body); strings.Contains(string(raw), private) {
				t.Fatalf("/readyz, which needs no key, says %s: %s", private, raw)
			}
		}
		if wantMissing != "" && (len(body.Missing) != 1 || !strings.Contains(body.Missing[0], wantMissing) || !strings.Contains(body.Serving, "indexed so far")) {
			t.Fatalf("/readyz missing %q (serving %q), want %q", body.Missing, body.Serving, wantMissing)
		}
	}
	check(http.StatusServiceUnavailable, "feed catching up: first full scan", FeedScanning)
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", Scanning: true, ScanListed: 3000, ScanDocuments: 41000}})
	check(http.StatusServiceUnavailable, "feed catching up: first full scan", FeedScanning)
	refused := "CouchDB at http://x is unreachable: connection refused (not running, or another port?)"
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", Failing: true, LastError: refused, ErrorKind: "unreachable"}})
	check(http.StatusServiceUnavailable, "feed connecting: unreachable (see /status)", FeedReconnecting)
	// Caught up once, the index answers: ready through a later outage
	// (refused, then 401, then 404), the body saying what kind of failure
	// the feed meets, never the server, database or user it names.
	for _, cause := range []struct{ text, kind string }{{refused, "unreachable"},
		{`CouchDB rejected the credentials for user "sync" (401 unauthorized): was the password changed?`, "unauthorized"},
		{`database "vault" does not exist at http://x (404 not found): deleted, or being rebuilt?`, "no database"}} {
		st.Store(Status{Feed: FeedStatus{Source: "couchdb", CaughtUp: true, Failing: true, LastError: cause.text, ErrorKind: cause.kind}, Index: IndexStatus{Notes: 264}})
		check(http.StatusOK, "", FeedReconnecting)
	}
	st.Store(Status{Feed: FeedStatus{Source: "folder", CaughtUp: true, Failing: true, LastError: "open /vault: permission denied"}, Index: IndexStatus{Notes: 264}})
	check(http.StatusOK, "", FeedReconnecting)
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", CaughtUp: true, Connected: true}, Index: IndexStatus{Notes: 264}})
	check(http.StatusOK, "", FeedFollowing)
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", CaughtUp: true}, Index: IndexStatus{Notes: 264}})
	check(http.StatusOK, "", FeedConnecting)
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", CaughtUp: true, Stopped: "see the log"}})
	check(http.StatusServiceUnavailable, "feed stopped", FeedStopped)
	if resp := do(t, http.MethodGet, hs.URL+"/healthz", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz %d", resp.StatusCode)
	}
}

// /status?allow_web=true and /readyz, which answers without the key, count
// open notes only and leave out every figure a personal note moves.
func TestStatusOpenOnly(t *testing.T) {
	full := Status{
		Feed: FeedStatus{Source: "couchdb", CaughtUp: true, Connected: true, LastSeq: "12-a", UpdateSeq: "12-a", Lag: 0,
			LastChangeAt: time.Unix(1700000000, 0), ScanDone: 5, ScanTotal: 5},
		Index: IndexStatus{Notes: 5, OpenNotes: 3, PersonalNotes: 2, Chunks: 9, OpenChunks: 4, Vectors: 8, OpenVectors: 4,
			EmbeddingBacklog: 1, OpenEmbeddingBacklog: 0, IncompleteNotes: 1, FileBytes: 4096},
		Reconcile: ReconcileStatus{Notes: 6, Added: 1, TookSeconds: 3.5},
	}
	full.Feed.Failing, full.Feed.ErrorKind = true, "other"
	full.Feed.LastError = "scan vault folder /vault: lstat /vault/Journal/2024-03 therapy.md: no such file or directory"
	full.Embedder.LastError = "embed Journal/2024-03 therapy.md: connection refused"
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{Status: func(context.Context) Status { return full }})
	var open, whole Status
	decode(t, do(t, http.MethodGet, hs.URL+"/status?allow_web=true", nil), &open)
	decode(t, do(t, http.MethodGet, hs.URL+"/status", nil), &whole)
	want := IndexStatus{Notes: 3, OpenNotes: 3, Chunks: 4, OpenChunks: 4, Vectors: 4, OpenVectors: 4}
	if diff := cmp.Diff(want, open.Index); diff != "" {
		t.Errorf("/status?allow_web=true index (-want +got):\n%s", diff)
	}
	if f := open.Feed; f.LastSeq != "" || f.UpdateSeq != "" || f.Lag != -1 || !f.LastChangeAt.IsZero() || f.ScanTotal != 0 || !f.CaughtUp {
		t.Errorf("/status?allow_web=true feed: %+v", f)
	}
	if open.Reconcile != (ReconcileStatus{}) {
		t.Errorf("/status?allow_web=true reconcile: %+v", open.Reconcile)
	}
	if whole.Index.Notes != 5 || whole.Feed.LastSeq != "12-a" {
		t.Errorf("/status without allow_web: %+v", whole)
	}
	var ready struct{ Notes int }
	decode(t, do(t, http.MethodGet, hs.URL+"/readyz", nil), &ready)
	if ready.Notes != 3 {
		t.Errorf("/readyz counts %d notes, want the 3 open ones", ready.Notes)
	}
	if raw := mustJSON(t, open); strings.Contains(raw, "therapy") {
		t.Errorf("/status?allow_web=true names a note in an error: %s", raw)
	}
	if !open.Feed.Failing || open.Feed.LastError != "other (see /status)" {
		t.Errorf("/status?allow_web=true feed error %q (failing %v), want its kind", open.Feed.LastError, open.Feed.Failing)
	}
	// A value that is not one true or false is refused, never read as
	// false, which would widen an open-only caller to the whole vault.
	for _, q := range []string{"allow_web=maybe", "allow_web", "allow_web=", "allow_web=true&allow_web=false", "allow_web=false&allow_web=true"} {
		if resp := do(t, http.MethodGet, hs.URL+"/status?"+q, nil); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("/status?%s: %d, want 400", q, resp.StatusCode)
		}
	}
}

func TestStatusNotes(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{})
	var got struct {
		Total int `json:"total"`
		Notes []struct {
			Path, State, Sensitivity string
			Chunks                   int
		} `json:"notes"`
	}
	decode(t, do(t, http.MethodGet, hs.URL+"/status/notes?state=indexed&path=recipes&limit=2", nil), &got)
	if got.Total != 3 || len(got.Notes) != 2 || got.Notes[0].Path != "Recipes/Bread.md" || got.Notes[0].State != "indexed" || got.Notes[0].Chunks != 1 {
		t.Fatalf("indexed recipes, first page: %+v", got)
	}
	type list struct {
		Total int                                  `json:"total"`
		Notes []struct{ Path, Sensitivity string } `json:"notes"`
	}
	var all, open list
	decode(t, do(t, http.MethodGet, hs.URL+"/status/notes?limit=500", nil), &all)
	resp := do(t, http.MethodGet, hs.URL+"/status/notes?allow_web=true&limit=500", nil)
	decode(t, resp, &open)
	openPaths := 0
	for _, n := range all.Notes {
		if n.Sensitivity == "open" {
			openPaths++
		}
	}
	if resp.StatusCode != http.StatusOK || len(open.Notes) == 0 || open.Total != openPaths || openPaths == all.Total {
		t.Fatalf("allow_web=true: %d, %d of %d listed, want the %d open notes of %d", resp.StatusCode, len(open.Notes), open.Total, openPaths, all.Total)
	}
	for _, n := range open.Notes {
		if n.Sensitivity != "open" || strings.HasPrefix(n.Path, "Diary/") {
			t.Errorf("allow_web=true lists %+v", n)
		}
	}
	for _, q := range []string{"state=lost", "limit=0", "limit=x", "offset=-1", "allow_web=maybe"} {
		resp := do(t, http.MethodGet, hs.URL+"/status/notes?"+q, nil)
		var e apiErr
		decode(t, resp, &e)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Param == nil {
			t.Errorf("?%s: %d %+v, want 400 naming the parameter", q, resp.StatusCode, e.Error)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
