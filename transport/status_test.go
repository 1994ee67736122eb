package transport

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

func TestReadiness(t *testing.T) {
	var st atomic.Value
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", Scanning: true, ScanDone: 1200, ScanTotal: 6500}, Index: IndexStatus{Notes: 1200, EmbeddingBacklog: 4000}})
	hs, _ := testServer(t, testVault(t), upstream(t), Options{Status: func(context.Context) Status { return st.Load().(Status) }})
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
		if st := st.Load().(Status); body.FeedError != map[bool]string{true: st.Feed.LastError}[st.Feed.Failing] {
			t.Fatalf("/readyz feed_error %q while the feed's state is %+v", body.FeedError, st.Feed)
		}
		if wantMissing != "" && (len(body.Missing) != 1 || !strings.Contains(body.Missing[0], wantMissing) || !strings.Contains(body.Serving, "indexed so far")) {
			t.Fatalf("/readyz missing %q (serving %q), want %q", body.Missing, body.Serving, wantMissing)
		}
	}
	check(http.StatusServiceUnavailable, "first full scan, 1200 of 6500 notes written", FeedScanning)
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", Scanning: true, ScanListed: 3000, ScanDocuments: 41000}})
	check(http.StatusServiceUnavailable, "listing the vault, 3000 of 41000 documents", FeedScanning)
	refused := "CouchDB at http://x is unreachable: connection refused (not running, or another port?)"
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", Failing: true, LastError: refused}})
	check(http.StatusServiceUnavailable, "feed connecting: CouchDB at http://x is unreachable", FeedReconnecting)
	// Caught up once, the index answers: ready through a later outage
	// (refused, then 401, then 404), the body saying what the feed meets.
	for _, cause := range []string{refused, `CouchDB rejected the credentials for user "sync" (401 unauthorized): was the password changed?`,
		`database "vault" does not exist at http://x (404 not found): deleted, or being rebuilt?`} {
		st.Store(Status{Feed: FeedStatus{Source: "couchdb", CaughtUp: true, Failing: true, LastError: cause}, Index: IndexStatus{Notes: 264}})
		check(http.StatusOK, "", FeedReconnecting)
	}
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

func TestStatusNotes(t *testing.T) {
	hs, _ := testServer(t, testVault(t), upstream(t), Options{})
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
