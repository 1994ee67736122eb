package couchtest

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/tstest/corpustext"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// change is one row of a database's _changes, reduced to what a replay must
// keep.
type change struct {
	ID      string
	Rev     string
	Deleted bool
}

// mustChanges returns db's _changes (style=all_docs) in feed order.
func mustChanges(tb testing.TB, s *Server, db string) []change {
	tb.Helper()
	var feed struct {
		Results []struct {
			ID      string `json:"id"`
			Changes []struct {
				Rev string `json:"rev"`
			} `json:"changes"`
			Deleted bool `json:"deleted"`
		} `json:"results"`
	}
	if err := s.do(http.MethodGet, url.PathEscape(db)+"/_changes?style=all_docs", nil, &feed); err != nil {
		tb.Fatal(err)
	}
	out := make([]change, len(feed.Results))
	for i, r := range feed.Results {
		if len(r.Changes) != 1 {
			tb.Fatalf("%s: %d leaf revs, want 1", r.ID, len(r.Changes))
		}
		out[i] = change{ID: r.ID, Rev: r.Changes[0].Rev, Deleted: r.Deleted}
	}
	return out
}

// rowChanges is what mustChanges should give after replaying rows.
func rowChanges(tb testing.TB, rows []ChangeRow) []change {
	tb.Helper()
	out := make([]change, len(rows))
	for i, r := range rows {
		var doc struct {
			Rev string `json:"_rev"`
		}
		if err := json.Unmarshal(r.Doc, &doc); err != nil {
			tb.Fatal(err)
		}
		out[i] = change{ID: r.ID, Rev: doc.Rev, Deleted: r.Deleted}
	}
	return out
}

// mustRevs returns id → rev from db's _all_docs.
func mustRevs(tb testing.TB, s *Server, db string) map[string]string {
	tb.Helper()
	var all allDocs
	if err := s.do(http.MethodGet, url.PathEscape(db)+"/_all_docs", nil, &all); err != nil {
		tb.Fatal(err)
	}
	return all.revs()
}

// dumpRevs returns id → rev from an _all_docs dump.
func dumpRevs(tb testing.TB, path string) map[string]string {
	tb.Helper()
	var all allDocs
	if err := readDump(path, &all); err != nil {
		tb.Fatal(err)
	}
	return all.revs()
}

type allDocs struct {
	Rows []struct {
		ID    string `json:"id"`
		Value struct {
			Rev string `json:"rev"`
		} `json:"value"`
	} `json:"rows"`
}

func (a allDocs) revs() map[string]string {
	m := make(map[string]string, len(a.Rows))
	for _, r := range a.Rows {
		m[r.ID] = r.Value.Rev
	}
	return m
}

func mustGetJSON(tb testing.TB, s *Server, path string, out any) {
	tb.Helper()
	if err := s.do(http.MethodGet, path, nil, out); err != nil {
		tb.Fatal(err)
	}
}

func TestNewDBGivesSeparateDatabases(t *testing.T) {
	s := Start(t)
	a, b := s.NewDB(t), s.NewDB(t)
	if a == b {
		t.Fatalf("NewDB gave %q twice", a)
	}
	if err := s.do(http.MethodPut, url.PathEscape(a)+"/doc", map[string]string{"v": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, n := s.DBInfo(t, a); n != 1 {
		t.Errorf("%s: doc_count %d, want 1", a, n)
	}
	if seq, n := s.DBInfo(t, b); n != 0 || seq != "0" {
		t.Errorf("%s: doc_count %d, update_seq %q; want 0, \"0\"", b, n, seq)
	}
}

func TestLoadFixtureKeepsRevs(t *testing.T) {
	s := Start(t)
	db := s.NewDB(t)
	n := s.LoadFixture(t, db, "testdata", "vault")
	want := dumpRevs(t, filepath.Join("testdata", "vault.all_docs.json"))
	if n != len(want) {
		t.Errorf("LoadFixture wrote %d docs, dump has %d", n, len(want))
	}
	if _, count := s.DBInfo(t, db); count != len(want) {
		t.Errorf("doc_count %d, want %d", count, len(want))
	}
	if diff := cmp.Diff(want, mustRevs(t, s, db)); diff != "" {
		t.Errorf("revs (-dump +loaded):\n%s", diff)
	}

	raw, err := os.ReadFile(filepath.Join("testdata", "vault.local_sync_parameters.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fromDump, loaded map[string]any
	if err := json.Unmarshal(raw, &fromDump); err != nil {
		t.Fatal(err)
	}
	mustGetJSON(t, s, url.PathEscape(db)+"/"+LocalSyncParametersID, &loaded)
	if loaded["_rev"] != "0-1" {
		t.Errorf("%s _rev %v, want 0-1", LocalSyncParametersID, loaded["_rev"])
	}
	delete(fromDump, "_rev")
	delete(loaded, "_rev")
	if diff := cmp.Diff(fromDump, loaded); diff != "" {
		t.Errorf("%s (-dump +loaded):\n%s", LocalSyncParametersID, diff)
	}
	var milestone map[string]any
	mustGetJSON(t, s, url.PathEscape(db)+"/"+LocalMilestoneID, &milestone)
	if milestone["type"] != "milestoneinfo" {
		t.Errorf("%s: type %v, want milestoneinfo", LocalMilestoneID, milestone["type"])
	}
}

func TestPutLocalReplaces(t *testing.T) {
	s := Start(t)
	db := s.NewDB(t)
	s.PutLocal(t, db, "_local/x", []byte(`{"_id":"_local/x","_rev":"0-7","v":1}`))
	s.PutLocal(t, db, "_local/x", []byte(`{"v":2}`))
	var got map[string]any
	mustGetJSON(t, s, url.PathEscape(db)+"/_local/x", &got)
	if got["v"] != 2.0 || got["_rev"] != "0-2" {
		t.Errorf("_local/x = %v, want v 2 at rev 0-2", got)
	}
}

func TestReplayChangesVault(t *testing.T) {
	rows := ReadChanges(t, filepath.Join("testdata", "vault.changes.json"))
	if len(rows) != 10 || rows[0].Seq != "1" || rows[9].Seq != "12" {
		t.Fatalf("ReadChanges: %d rows, seqs %q..%q; want 10 rows, 1..12", len(rows), rows[0].Seq, rows[len(rows)-1].Seq)
	}
	want := rowChanges(t, rows)
	s := Start(t)
	for _, batch := range []int{1, 4, LoadBatch} {
		db := s.NewDB(t)
		s.ReplayChanges(t, db, rows, batch)
		if diff := cmp.Diff(want, mustChanges(t, s, db)); diff != "" {
			t.Errorf("batch %d: _changes (-dump +replayed):\n%s", batch, diff)
		}
		if seq, n := s.DBInfo(t, db); n != len(rows) || seq != "10" {
			t.Errorf("batch %d: doc_count %d, update_seq %q; want %d, \"10\"", batch, n, seq, len(rows))
		}
	}
}

// TestReplayChangesTombstones round-trips a database with an edited doc, a
// _deleted tombstone and a LiveSync-style soft delete through a gzipped
// _changes dump.
func TestReplayChangesTombstones(t *testing.T) {
	s := Start(t)
	src := s.NewDB(t)
	put := func(id string, body map[string]any) string {
		t.Helper()
		var res struct {
			Rev string `json:"rev"`
		}
		if err := s.do(http.MethodPut, url.PathEscape(src)+"/"+url.PathEscape(id), body, &res); err != nil {
			t.Fatal(err)
		}
		return res.Rev
	}
	rev := put("edited", map[string]any{"v": 1})
	put("edited", map[string]any{"_rev": rev, "v": 2})
	rev = put("gone", map[string]any{"v": 1})
	if err := s.do(http.MethodDelete, url.PathEscape(src)+"/gone?rev="+rev, nil, nil); err != nil {
		t.Fatal(err)
	}
	put("soft", map[string]any{"deleted": true, "children": []string{}})

	var dump json.RawMessage
	mustGetJSON(t, s, url.PathEscape(src)+"/_changes?include_docs=true&style=all_docs&since=0", &dump)
	path := filepath.Join(t.TempDir(), "src.changes.json.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	_, err = zw.Write(dump)
	if err := errors.Join(err, zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}

	rows := ReadChanges(t, path)
	dst := s.NewDB(t)
	s.ReplayChanges(t, dst, rows, LoadBatch)
	want := []change{
		{ID: "edited", Rev: "2-"},
		{ID: "gone", Rev: "2-", Deleted: true},
		{ID: "soft", Rev: "1-"},
	}
	got := mustChanges(t, s, dst)
	if diff := cmp.Diff(mustChanges(t, s, src), got); diff != "" {
		t.Errorf("_changes (-source +replayed):\n%s", diff)
	}
	if len(got) != len(want) {
		t.Fatalf("replayed _changes %v, want ids and revs like %v", got, want)
	}
	for i, w := range want {
		if g := got[i]; g.ID != w.ID || g.Deleted != w.Deleted || g.Rev[:2] != w.Rev {
			t.Errorf("row %d = %+v, want %s at %s… deleted=%v", i, g, w.ID, w.Rev, w.Deleted)
		}
	}
	if _, n := s.DBInfo(t, dst); n != 2 {
		t.Errorf("doc_count %d, want 2 (the tombstone is not counted)", n)
	}
	err = s.do(http.MethodGet, url.PathEscape(dst)+"/gone", nil, nil)
	if se := (*statusError)(nil); !errors.As(err, &se) || se.status != http.StatusNotFound {
		t.Errorf("GET gone: %v, want 404", err)
	}
}

// TestHelpCorpus loads the help corpus's _all_docs dump and replays its
// _changes dump (3,970 docs each, about 4 s each under -race).
func TestHelpCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("loads about 8k docs; skipped with -short")
	}
	dir := corpustext.Require(t)
	var srcInfo struct {
		DocCount  int             `json:"doc_count"`
		UpdateSeq json.RawMessage `json:"update_seq"`
	}
	if err := readDump(filepath.Join(dir, "help.dbinfo.json"), &srcInfo); err != nil {
		t.Fatal(err)
	}
	s := Start(t)

	t.Run("all_docs", func(t *testing.T) {
		db := s.NewDB(t)
		n := s.LoadFixture(t, db, dir, "help")
		seq, count := s.DBInfo(t, db)
		if n != srcInfo.DocCount || count != n {
			t.Errorf("wrote %d docs, doc_count %d; the dumped database had %d", n, count, srcInfo.DocCount)
		}
		if seq == "" || seq == "0" {
			t.Errorf("update_seq %q after loading", seq)
		}
		want := dumpRevs(t, filepath.Join(dir, "help.all_docs.json.gz"))
		if diff := cmp.Diff(want, mustRevs(t, s, db)); diff != "" {
			t.Errorf("revs (-dump +loaded):\n%s", diff)
		}
	})

	t.Run("changes", func(t *testing.T) {
		rows := ReadChanges(t, filepath.Join(dir, "help.changes.json.gz"))
		if got := rows[len(rows)-1].Seq; got != string(srcInfo.UpdateSeq) {
			t.Errorf("last row's seq %q, want the dumped update_seq %s", got, srcInfo.UpdateSeq)
		}
		db := s.NewDB(t)
		s.ReplayChanges(t, db, rows, LoadBatch)
		if diff := cmp.Diff(rowChanges(t, rows), mustChanges(t, s, db)); diff != "" {
			t.Errorf("_changes (-dump +replayed):\n%s", diff)
		}
		seq, count := s.DBInfo(t, db)
		if count != srcInfo.DocCount || seq != "3970" {
			t.Errorf("doc_count %d, update_seq %q; want %d, \"3970\" (one seq per replayed doc)", count, seq, srcInfo.DocCount)
		}
	})
}

func TestSeqString(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		ok        bool
	}{
		{raw: `12`, want: "12", ok: true},
		{raw: `"12-g1AAAAB"`, want: "12-g1AAAAB", ok: true},
		{raw: `null`},
		{raw: `{}`},
		{raw: ``},
	} {
		got, err := seqString(json.RawMessage(tc.raw))
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("seqString(%s) = %q, %v; want %q, ok=%v", tc.raw, got, err, tc.want, tc.ok)
		}
	}
}

func TestJSLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"en/home.md", "h:1crg", true},
		{"sv/x.md", "h:1crg", false},
		{"a", "a", false},
		// UTF-16 puts surrogates (U+D800–DFFF) below U+E000–U+FFFF; UTF-8 does not.
		{"🗂️ Hub.md", "\uffff", true},
		{"\uffff", "🗂️ Hub.md", false},
	} {
		if got := jsLess(tc.a, tc.b); got != tc.want {
			t.Errorf("jsLess(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestURLs(t *testing.T) {
	s := &Server{URL: "http://127.0.0.1:5984", User: "ad min", Password: "p@ss"}
	for _, tc := range []struct{ got, want string }{
		{s.DBURL("vault"), "http://127.0.0.1:5984/vault"},
		{s.DBURL("a/b"), "http://127.0.0.1:5984/a%2Fb"},
		{s.DBURL(""), "http://127.0.0.1:5984"},
		{s.AuthURL("vault"), "http://ad%20min:p%40ss@127.0.0.1:5984/vault"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

func TestClientRefusesNonLoopback(t *testing.T) {
	s := &Server{URL: "http://192.0.2.1:5984"}
	err := s.do(http.MethodGet, "", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "loopback only") {
		t.Errorf("GET %s: %v; want refused as not loopback", s.URL, err)
	}
}
