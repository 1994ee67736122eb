package transport

import (
	"context"
	"encoding/json"
	"io"
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

// An embedder that cannot embed leaves /readyz ready, with the embedder's
// state and a warning saying how questions are searched meanwhile; never
// the error's text, which needs the key (/status). Before, a broken model
// file left it at ready:true with no word of the embedder (issue 40).
func TestReadyzWarnsOfTheEmbedder(t *testing.T) {
	var st atomic.Value
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{Status: func(context.Context) Status { return st.Load().(Status) }})
	loadErr := "load /home/me/.cache/vaultask/bge-small-en-v1.5: tokenizer.json: sha256 differs from the fetch: run scripts/fetch-model.sh bge"
	for _, tc := range []struct {
		embedder     EmbedderStatus
		openBacklog  int
		vectorSearch bool
		reembedding  *Reembedding
		warning      string
	}{
		{EmbedderStatus{State: EmbedderIdle, Available: true}, 0, true, nil, ""},
		{EmbedderStatus{State: EmbedderEmbedding, Available: true}, 4, true, nil, ""},
		{EmbedderStatus{State: EmbedderUnavailable, LastError: loadErr}, 4, false, nil, "embedder unavailable: new and changed notes are not embedded; questions are searched by full text only"},
		{EmbedderStatus{State: EmbedderUnavailable, LastError: loadErr}, 9, true, &Reembedding{Model: "builtin/bge-small-en-v1.5 (384)", Total: 9, Stalled: "waiting for the embedder (unavailable)"},
			"embedder unavailable: new and changed notes are not embedded; questions are searched by full text, and the vectors the index has"},
		{EmbedderStatus{State: EmbedderFailing, LastError: "dial tcp 127.0.0.1:11434: connection refused"}, 0, false, nil, "embedder failing"},
	} {
		st.Store(Status{Feed: FeedStatus{Source: "couchdb", CaughtUp: true, Connected: true}, Embedder: tc.embedder,
			Index: IndexStatus{Notes: 3, OpenEmbeddingBacklog: tc.openBacklog, VectorSearch: tc.vectorSearch, Reembedding: tc.reembedding}})
		resp := do(t, http.MethodGet, hs.URL+"/readyz", nil)
		var body struct {
			Ready       bool     `json:"ready"`
			Embedder    string   `json:"embedder"`
			Warnings    []string `json:"warnings"`
			Reembedding struct {
				Stalled string `json:"stalled"`
			} `json:"reembedding"`
		}
		rawBytes, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		raw := string(rawBytes)
		if err := json.Unmarshal(rawBytes, &body); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !body.Ready || body.Embedder != tc.embedder.State {
			t.Errorf("/readyz with the embedder %s: %d %s, want 200, ready, and its state", tc.embedder.State, resp.StatusCode, raw)
		}
		if got := strings.Join(body.Warnings, "; "); tc.warning == "" && got != "" || !strings.Contains(got, tc.warning) {
			t.Errorf("/readyz with the embedder %s warns %q, want %q", tc.embedder.State, got, tc.warning)
		}
		if tc.reembedding != nil && body.Reembedding.Stalled != tc.reembedding.Stalled {
			t.Errorf("/readyz re-embedding stalled %q, want %q", body.Reembedding.Stalled, tc.reembedding.Stalled)
		}
		if tc.embedder.LastError != "" && strings.Contains(raw, tc.embedder.LastError[:20]) {
			t.Errorf("/readyz, which needs no key, quotes the embedder's error: %s", raw)
		}
	}
}

// /status?allow_web=true and /readyz, which answers without the key, count
// open notes only and leave out every figure a personal note moves.
func TestStatusOpenOnly(t *testing.T) {
	full := Status{
		Feed: FeedStatus{Source: "couchdb", CaughtUp: true, Connected: true, LastSeq: "12-a", UpdateSeq: "12-a", Lag: 0,
			LastChangeAt: time.Unix(1700000000, 0), ScanDone: 5, ScanTotal: 5},
		Index: IndexStatus{Notes: 5, OpenNotes: 3, PersonalNotes: 2, Chunks: 9, OpenChunks: 4, Vectors: 8, OpenVectors: 4,
			EmbeddingBacklog: 1, OpenEmbeddingBacklog: 0, EmbeddingStaged: 3, OpenEmbeddingStaged: 1, VectorSearch: true,
			IncompleteNotes: 1, FileBytes: 4096},
		Embedder:  EmbedderStatus{State: EmbedderEmbedding, Embedded: 20, OpenEmbedded: 7, ChunksPerSecond: 3.5, SecondsLeft: 40},
		Reconcile: ReconcileStatus{Notes: 6, Added: 1, TookSeconds: 3.5},
	}
	full.Feed.Failing, full.Feed.ErrorKind = true, "other"
	full.Feed.LastError = "scan vault folder /vault: lstat /vault/Journal/2024-03 therapy.md: no such file or directory"
	full.Embedder.LastError = "embed Journal/2024-03 therapy.md: connection refused"
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{Status: func(context.Context) Status { return full }})
	var open, whole Status
	decode(t, do(t, http.MethodGet, hs.URL+"/status?allow_web=true", nil), &open)
	decode(t, do(t, http.MethodGet, hs.URL+"/status", nil), &whole)
	want := IndexStatus{Notes: 3, OpenNotes: 3, Chunks: 4, OpenChunks: 4, Vectors: 4, OpenVectors: 4,
		EmbeddingStaged: 1, OpenEmbeddingStaged: 1, VectorSearch: true}
	if diff := cmp.Diff(want, open.Index); diff != "" {
		t.Errorf("/status?allow_web=true index (-want +got):\n%s", diff)
	}
	// Only the personal note waits (no open chunk is on the backlog): to an
	// open-only caller the embedder is idle.
	wantEmb := EmbedderStatus{State: EmbedderIdle, Embedded: 7, OpenEmbedded: 7}
	if diff := cmp.Diff(wantEmb, open.Embedder); diff != "" {
		t.Errorf("/status?allow_web=true embedder (-want +got):\n%s", diff)
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
	var ready struct {
		Notes           int
		EmbeddingStaged int `json:"embedding_staged"`
	}
	decode(t, do(t, http.MethodGet, hs.URL+"/readyz", nil), &ready)
	if ready.Notes != 3 || ready.EmbeddingStaged != 1 {
		t.Errorf("/readyz counts %d notes and %d chunks staged, want the 3 open ones and 1", ready.Notes, ready.EmbeddingStaged)
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
