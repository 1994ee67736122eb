package feed

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/tstest/couchtest"
)

// Names an earlier vaultask kept database db's checkpoint under, and names
// that were never its.
func TestFormerSourceName(t *testing.T) {
	former := formerSourceName("vault")
	for name, want := range map[string]bool{
		"couchdb http://127.0.0.1:5984/vault":         true,
		"couchdb https://nas.lan/couchdb/vault":       true,
		"couchdb vault":                               false,
		"couchdb http://127.0.0.1:5984/myvault":       false,
		"couchdb http://127.0.0.1:5984/vault/extra":   false,
		"couchdb ftp://127.0.0.1/vault":               false,
		"couchdb http:///vault":                       false,
		"folder http://127.0.0.1:5984/vault":          false,
		"couchdb http://127.0.0.1:5984/other-vault/x": false,
	} {
		if got := former(name); got != want {
			t.Errorf("formerSourceName(vault)(%q) = %v, want %v", name, got, want)
		}
	}
}

// localhostURL is srv's URL with localhost for 127.0.0.1: the same server,
// spelled another way.
func localhostURL(tb testing.TB, srv *couchtest.Server) string {
	tb.Helper()
	u, ok := strings.CutPrefix(srv.URL, "http://127.0.0.1:")
	if !ok {
		tb.Skipf("the test server is at %s, not on 127.0.0.1", srv.URL)
	}
	return "http://localhost:" + u
}

// A follower that reaches the database its index caught up with under
// another spelling of the server's URL resumes from the checkpoint, whether
// the index keeps it under the database's name or, as an earlier vaultask
// did, under the URL: no scan, the note written meanwhile followed, the
// checkpoint kept under the name alone. A database rebuilt under the same
// name (a new LiveSync setup) is reconciled from scratch all the same.
func TestFollowerResumesUnderAnotherSpelling(t *testing.T) {
	for _, tc := range []struct {
		name            string
		formerName      bool // the index keeps the checkpoint under the URL it was taken by
		rebuilt         bool // the database was rebuilt with a new LiveSync setup meanwhile
		wantReconciles  int
		wantLogFragment string // a line the follower logs
	}{
		{name: "checkpoint by name"},
		{name: "checkpoint by URL", formerName: true, wantLogFragment: "it is kept under the database's name from now on"},
		{name: "another database by the name", formerName: true, rebuilt: true, wantReconciles: 1,
			wantLogFragment: "the database is not the one the checkpoint was taken in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := couchtest.Start(t)
			db := srv.NewDB(t)
			srv.LoadFixture(t, db, fixtures, "vault")
			store := mustStore(t)
			ctx := context.Background()
			first := NewFollower(mustConnect(t, couchOptions(srv, db)), store.Feed(), fastOptions())
			if err := first.Open(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = first.Close(ctx) }) // when the test stops before closeFollower
			waitCaughtUp(t, srv, db, first)
			closeFollower(t, first)
			since := first.Stats().Checkpoint
			if tc.formerName {
				st, _, err := store.Feed().Checkpoint(ctx, sourceName(db))
				if err != nil || st.Identity == "" {
					t.Fatalf("the fixture's LiveSync identity: %q, %v", st.Identity, err)
				}
				if _, err := store.Feed().Apply(ctx, index.Batch{Source: "couchdb " + srv.URL + "/" + db, Checkpoint: since, Identity: st.Identity, Sole: true}); err != nil {
					t.Fatal(err)
				}
			}
			want := mustSnapshot(t, store).Docs
			if tc.rebuilt {
				rebuildWithNewSetup(t, srv, db)
				want = map[string]string{}
			}
			n, c := liveNote("Written/Meanwhile.md", "written while nothing followed\n")
			bulk(t, srv, db, c, n)
			want["Written/Meanwhile.md"] = hashOf("written while nothing followed\n")

			var logs logBuffer
			logs.dumpOnFailure(t)
			opts := couchOptions(srv, db)
			opts.URL, opts.Logger, opts.Heartbeat = localhostURL(t, srv), logs.logger(), recreateHeartbeat
			f := mustFollow(t, mustConnect(t, opts), store, checkingOptions())
			if st := f.Stats(); !st.Resumed || st.Checkpoint != since {
				t.Fatalf("opened under another spelling: resumed %v from %q, want resumed from %q", st.Resumed, st.Checkpoint, since)
			}
			waitFor(t, 10*time.Second, "the database's notes", func() bool { return cmp.Equal(want, mustSnapshot(t, store).Docs) })
			waitCaughtUp(t, srv, db, f)
			if got := f.Stats().Reconciles; got != tc.wantReconciles {
				t.Errorf("%d full scans, want %d", got, tc.wantReconciles)
			}
			if !strings.Contains(logs.String(), tc.wantLogFragment) { // "" for none
				t.Errorf("no log line with %q", tc.wantLogFragment)
			}
			rows := mustSQL(t, store).QueryRow(`SELECT group_concat(source, ',') FROM feed_state`)
			var sources string
			if err := rows.Scan(&sources); err != nil || sources != sourceName(db) {
				t.Errorf("feed_state sources = %q, %v; want %q alone", sources, err, sourceName(db))
			}
		})
	}
}

// rebuildWithNewSetup deletes db and creates it again with the fixture's
// milestone created a day later, as LiveSync's "rebuild remote" does.
func rebuildWithNewSetup(tb testing.TB, srv *couchtest.Server, db string) {
	tb.Helper()
	recreate(tb, srv, db)
	raw, err := os.ReadFile(filepath.Join(fixtures, "vault.local_milestone.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var milestone map[string]any
	if err := json.Unmarshal(raw, &milestone); err != nil {
		tb.Fatal(err)
	}
	milestone["created"] = milestone["created"].(float64) + 86_400_000
	delete(milestone, "_rev")
	raw, _ = json.Marshal(milestone)
	srv.PutLocal(tb, db, couchtest.LocalMilestoneID, raw)
}
