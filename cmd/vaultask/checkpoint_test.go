package main

import (
	"database/sql"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/couchtest"
)

// spellingStatus is what these tests read of serve's /status.
type spellingStatus struct {
	Feed struct {
		State     string `json:"state"`
		Resumed   bool   `json:"resumed"`
		CaughtUp  bool   `json:"caught_up"`
		Failing   bool   `json:"failing"`
		ErrorKind string `json:"error_kind"`
		LastError string `json:"last_error"`
		LastSeq   string `json:"last_seq"`
	} `json:"feed"`
	Index struct {
		Notes int `json:"notes"`
	} `json:"index"`
	Reconcile struct {
		LastRun time.Time `json:"last_run"`
	} `json:"reconcile"`
}

// A vault indexed through http://127.0.0.1:PORT and served through
// http://localhost:PORT, the same server and database, is the index that
// caught up: /readyz is 200 from the first request, the feed resumes from
// the checkpoint with no full scan and follows what is written. Also with
// credentials CouchDB refuses meanwhile (ready, /status saying why the feed
// fails, following once they are right), and from an index whose checkpoint
// an earlier vaultask kept under the URL it indexed by.
func TestServeResumesUnderAnotherSpelling(t *testing.T) {
	for _, tc := range []struct {
		name        string
		wrongUser   bool // serve starts with a user CouchDB does not know yet
		formerlyURL bool // the index keeps its checkpoint under the URL, as before
	}{
		{name: "same credentials"},
		{name: "wrong credentials", wrongUser: true},
		{name: "checkpoint kept under the URL", formerlyURL: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, db, lp := serveVault(t)
			livesyncSetup(t, srv, db)
			env := couchEnv(t, srv, db)
			mustIndexVault(t, env)
			indexPath := envValue(env, "VAULTASK_INDEX__PATH")
			if tc.formerlyURL {
				setSources(t, indexPath, "couchdb "+srv.URL+"/"+db)
			}
			port, ok := strings.CutPrefix(srv.URL, "http://127.0.0.1:")
			if !ok {
				t.Skipf("the test server is at %s, not on 127.0.0.1", srv.URL)
			}
			env = withEnv(env, "VAULTASK_VAULT__URL", "http://localhost:"+port)
			user := "reader-" + strings.ReplaceAll(tc.name, " ", "-")
			if tc.wrongUser {
				env = withEnv(withEnv(env, "VAULTASK_VAULT__USER", user), "VAULTASK_VAULT__PASSWORD", "reader's password")
			}

			s := startServe(t, env)
			if code, b := readyz(t, s); code != http.StatusOK || !b.Ready || b.Notes != 3 {
				t.Fatalf("/readyz at start under another spelling: %d %+v", code, b)
			}
			var st spellingStatus
			if tc.wrongUser {
				waitUntil(t, 30*time.Second, "/status saying the credentials are refused", func() bool {
					getJSON(t, s.url+"/status", &st)
					return st.Feed.Failing
				})
				if st.Feed.ErrorKind != "unauthorized" || !strings.Contains(st.Feed.LastError, `rejected the credentials for user "`+user+`"`) || !st.Feed.Resumed {
					t.Fatalf("/status feed with refused credentials: %+v", st.Feed)
				}
				if code, b := readyz(t, s); code != http.StatusOK || !b.Ready || b.FeedError != "unauthorized (see /status)" {
					t.Fatalf("/readyz with refused credentials: %d %+v", code, b)
				}
				couchUser(t, srv, db, user, "reader's password")
			}
			putNote(t, lp)("Recipes/Focaccia.md", "# Focaccia\n\nDimple the dough with oiled fingers and bake it at 230 degrees.\n")
			waitUntil(t, 60*time.Second, "the note written after the index, followed", func() bool {
				getJSON(t, s.url+"/status", &st)
				return st.Feed.State == "following" && st.Index.Notes == 4
			})
			if !st.Feed.Resumed || !st.Reconcile.LastRun.IsZero() || strings.Contains(s.stderr.String(), "scanning it whole") {
				t.Errorf("the vault was scanned again under another spelling: %+v\n%s", st, s.stderr)
			}
			if code, b := readyz(t, s); code != http.StatusOK || !b.Ready {
				t.Errorf("/readyz following: %d %+v", code, b)
			}
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			if got := sources(t, indexPath); got != "couchdb "+db {
				t.Errorf("the index keeps its checkpoint under %q, want the database's name", got)
			}
		})
	}
}

// livesyncSetup writes the _local documents LiveSync writes when it sets
// up a remote database: the vault's LiveSync identity.
func livesyncSetup(t *testing.T, srv *couchtest.Server, db string) {
	t.Helper()
	for id, file := range map[string]string{
		couchtest.LocalMilestoneID:      "vault.local_milestone.json",
		couchtest.LocalSyncParametersID: "vault.local_sync_parameters.json",
	} {
		raw, err := os.ReadFile(filepath.Join(livesyncFixtures, file))
		if err != nil {
			t.Fatal(err)
		}
		srv.PutLocal(t, db, id, raw)
	}
}

// openIndexFile opens the index file of a stopped vaultask.
func openIndexFile(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+url.PathEscape(path)+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// setSources renames the index's one checkpoint to source.
func setSources(t *testing.T, path, source string) {
	t.Helper()
	res, err := openIndexFile(t, path).Exec(`UPDATE feed_state SET source = ?`, source)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("rename the checkpoint: %d rows, %v", n, err)
	}
}

// sources names the index's checkpoints.
func sources(t *testing.T, path string) string {
	t.Helper()
	var names string
	if err := openIndexFile(t, path).QueryRow(`SELECT group_concat(source, ',') FROM feed_state`).Scan(&names); err != nil {
		t.Fatal(err)
	}
	return names
}
