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
	check := func(wantCode int, wantMissing string) {
		t.Helper()
		resp := do(t, http.MethodGet, hs.URL+"/readyz", nil)
		var body struct {
			Ready            bool     `json:"ready"`
			Missing          []string `json:"missing"`
			Notes            int      `json:"notes"`
			EmbeddingBacklog int      `json:"embedding_backlog"`
			Serving          string   `json:"serving"`
		}
		decode(t, resp, &body)
		if resp.StatusCode != wantCode || body.Ready != (wantCode == http.StatusOK) {
			t.Fatalf("/readyz %d %+v, want %d", resp.StatusCode, body, wantCode)
		}
		if wantMissing != "" && (len(body.Missing) != 1 || !strings.Contains(body.Missing[0], wantMissing) || !strings.Contains(body.Serving, "indexed so far")) {
			t.Fatalf("/readyz missing %q (serving %q), want %q", body.Missing, body.Serving, wantMissing)
		}
	}
	check(http.StatusServiceUnavailable, "first full scan, 1200 of 6500 notes written")
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", Failing: true, LastError: "CouchDB at http://x is unreachable: connection refused"}})
	check(http.StatusServiceUnavailable, "feed connecting: CouchDB at http://x is unreachable")
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", CaughtUp: true, Failing: true}, Index: IndexStatus{Notes: 264}})
	check(http.StatusOK, "") // caught up once stays ready through a later outage
	st.Store(Status{Feed: FeedStatus{Source: "couchdb", CaughtUp: true, Stopped: "see the log"}})
	check(http.StatusServiceUnavailable, "feed stopped")
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
