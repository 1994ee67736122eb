package feed

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/tstest/couchtest"
)

func TestConnectRefusesWrongCredentials(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	for _, cookie := range []bool{false, true} {
		opts := couchOptions(srv, db)
		opts.Password, opts.CookieAuth = "not-the-password", cookie
		_, err := Connect(context.Background(), opts)
		if !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("cookie %v: %v, want ErrUnauthorized", cookie, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, `"`+srv.User+`"`) || !strings.Contains(msg, srv.URL) || strings.Contains(msg, "not-the-password") || !strings.Contains(msg, "401") {
			t.Errorf("cookie %v: %q should name the user, the URL and the 401, never the password", cookie, msg)
		}
	}
	// Credentials in the URL are used and never shown.
	opts := couchOptions(srv, db)
	opts.User, opts.Password, opts.URL = "", "", strings.Replace(srv.URL, "://", "://intruder:hunter2@", 1)
	if _, err := Connect(context.Background(), opts); !errors.Is(err, ErrUnauthorized) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("credentials in the URL: %v", err)
	}
	opts = couchOptions(srv, "no-such-db")
	if _, err := Connect(context.Background(), opts); err == nil || !strings.Contains(err.Error(), `no database "no-such-db"`) {
		t.Errorf("missing database: %v", err)
	}
}

// Basic and cookie auth both read the vault.
func TestConnectAuthMethods(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadFixture(t, db, fixtures, "vault")
	for _, opts := range []CouchOptions{couchOptions(srv, db), func() CouchOptions { o := couchOptions(srv, db); o.CookieAuth = true; return o }(),
		func() CouchOptions {
			o := couchOptions(srv, db)
			o.URL, o.User, o.Password = srv.AuthURL(""), "", ""
			return o
		}()} {
		c := mustConnect(t, opts)
		l, err := NewReconciler(c, nil).List(context.Background())
		if err != nil || len(l.Notes) != 2 {
			t.Errorf("cookie %v: %d notes, %v; want 2", opts.CookieAuth, len(l.Notes), err)
		}
	}
}

// An end-to-end encrypted vault is refused without its passphrase, with an
// error naming the setting, whichever marker gives it away: the milestone,
// an encrypted chunk (a vault without milestone), or the first encrypted
// document to arrive.
func TestEncryptedVaultWithoutPassphrase(t *testing.T) {
	srv := couchtest.Start(t)
	wantErr := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, ErrEncryptedVault) || !strings.Contains(err.Error(), "needs LiveSync's passphrase") {
			t.Fatalf("%v, want ErrEncryptedVault saying a passphrase is needed", err)
		}
	}
	t.Run("milestone", func(t *testing.T) {
		db := srv.NewDB(t)
		srv.LoadFixture(t, db, fixtures, "vaultenc")
		_, err := Connect(context.Background(), couchOptions(srv, db))
		wantErr(t, err)
	})
	t.Run("no milestone", func(t *testing.T) {
		db := srv.NewDB(t)
		srv.LoadAllDocs(t, db, filepath.Join(fixtures, "vaultenc.all_docs.json"))
		_, err := Connect(context.Background(), couchOptions(srv, db))
		wantErr(t, err)
	})
	t.Run("first document", func(t *testing.T) {
		db := srv.NewDB(t)
		c := mustConnect(t, couchOptions(srv, db))
		f := NewFollower(c, mustStore(t).Feed(), fastOptions())
		if err := f.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		srv.ReplayChanges(t, db, allDocRows(t, filepath.Join(fixtures, "vaultenc.all_docs.json")), 100)
		select {
		case <-f.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the follower did not stop on an encrypted note")
		}
		wantErr(t, f.Close(context.Background()))
	})
	t.Run("wrong passphrase", func(t *testing.T) {
		db := srv.NewDB(t)
		srv.LoadFixture(t, db, fixtures, "vaultenc")
		opts := couchOptions(srv, db)
		opts.Passphrase = "incorrect horse"
		_, err := Connect(context.Background(), opts)
		if !errors.Is(err, ErrEncryptedVault) || !strings.Contains(err.Error(), "does not decrypt") {
			t.Fatalf("%v, want a wrong-passphrase error", err)
		}
	})
}

// vaultask never writes to CouchDB: a full index, a follow session and a
// reconcile leave the database's update_seq and every revision as they
// were, and every request it sends is a read.
func TestReadOnly(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadFixture(t, db, fixtures, "vault")
	srv.LoadAllDocs(t, db, "testdata/edge.all_docs.json")
	seq, _ := srv.DBInfo(t, db)
	before := revs(t, srv, db)

	rec := &recorder{next: srv.URL}
	proxy := newRecordingProxy(t, rec)
	opts := couchOptions(srv, db)
	opts.URL = proxy
	c := mustConnect(t, opts)
	store := mustStore(t)
	ctx := context.Background()
	if _, err := NewReconciler(c, store.Feed()).Run(ctx, ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	f := mustFollow(t, c, store, fastOptions())
	waitCaughtUp(t, srv, db, f)
	closeFollower(t, f)
	if _, err := NewReconciler(c, store.Feed()).Run(ctx, ReconcileOptions{Force: true}); err != nil {
		t.Fatal(err)
	}

	after, _ := srv.DBInfo(t, db)
	if after != seq {
		t.Errorf("update_seq %s -> %s", seq, after)
	}
	if diff := cmp.Diff(before, revs(t, srv, db)); diff != "" {
		t.Errorf("revisions changed (-before +after):\n%s", diff)
	}
	for _, r := range rec.all() {
		if !readRequest(r) {
			t.Errorf("a request that may write: %s", r)
		}
	}
	if len(rec.all()) == 0 {
		t.Fatal("the proxy saw no request")
	}
}

// readRequest accepts the requests a reader sends: GETs, and the POSTs that
// CouchDB uses for reads (_all_docs with keys, _changes).
func readRequest(r string) bool {
	method, path, _ := strings.Cut(r, " ")
	switch method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodPost:
		return strings.HasSuffix(path, "/_all_docs") || strings.HasSuffix(path, "/_changes")
	}
	return false
}
