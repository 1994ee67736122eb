package couchtest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// IDs of the _local documents LiveSync keeps beside the vault (the milestone's
// "obsydian" typo is LiveSync's own).
const (
	LocalSyncParametersID = "_local/obsidian_livesync_sync_parameters"
	LocalMilestoneID      = "_local/obsydian_livesync_milestone"
)

// LoadBatch is how many docs LoadAllDocs sends per _bulk_docs request.
const LoadBatch = 500

// client talks to loopback addresses only: it refuses to dial any other
// host, whatever COUCH_URL says, before a DNS lookup. The timeout covers a
// LoadBatch of large docs.
var client = &http.Client{
	Timeout: 2 * time.Minute,
	Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         dialLoopback,
		DisableCompression:  true,
		MaxIdleConnsPerHost: 4,
		// Below Node's 5 s keep-alive, so a pooled connection is never
		// reused just as the server closes it.
		IdleConnTimeout: 2 * time.Second,
	},
}

var dialer = &net.Dialer{Timeout: 5 * time.Second}

func dialLoopback(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("couchtest: refusing to dial %s: test servers are loopback only", address)
	}
	return dialer.DialContext(ctx, network, address)
}

// statusError is a CouchDB error response.
type statusError struct {
	method, url string
	status      int
	body        string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.method, e.url, e.status, e.body)
}

// do sends body (JSON-encoded unless nil) to s.URL/path with the admin's
// credentials and decodes a successful response into out unless it is nil.
func (s *Server) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := s.URL + "/" + path
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return err
	}
	req.SetBasicAuth(s.User, s.Password)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return &statusError{method: method, url: u, status: resp.StatusCode, body: strings.TrimSpace(string(b))}
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode response: %w", method, u, err)
	}
	return nil
}

// readDump decodes the JSON file at path, gunzipping it if it starts with
// gzip's magic bytes.
func readDump(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func hasDoc(doc json.RawMessage) bool {
	return len(doc) > 0 && string(doc) != "null"
}

// LoadAllDocs replays an _all_docs?include_docs=true dump (plain or gzipped)
// into db, LoadBatch docs per _bulk_docs request with new_edits:false, so each
// doc keeps its _rev. Rows without a doc (deleted or missing keys) are
// skipped. It returns the number of docs written. Load into a fresh database:
// a doc already there under another rev would become a conflict.
func (s *Server) LoadAllDocs(tb testing.TB, db, dumpPath string) int {
	tb.Helper()
	n, err := s.loadAllDocs(db, dumpPath)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func (s *Server) loadAllDocs(db, dumpPath string) (int, error) {
	var dump struct {
		Rows []struct {
			Doc json.RawMessage `json:"doc"`
		} `json:"rows"`
	}
	if err := readDump(dumpPath, &dump); err != nil {
		return 0, err
	}
	docs := make([]json.RawMessage, 0, len(dump.Rows))
	for _, r := range dump.Rows {
		if hasDoc(r.Doc) {
			docs = append(docs, r.Doc)
		}
	}
	if len(docs) == 0 && len(dump.Rows) > 0 {
		return 0, fmt.Errorf("%s: no row has a doc; dump _all_docs with include_docs=true", dumpPath)
	}
	for chunk := range slices.Chunk(docs, LoadBatch) {
		if err := s.bulkDocs(db, chunk); err != nil {
			return 0, err
		}
	}
	return len(docs), nil
}

// ChangeRow is one row of a _changes dump.
type ChangeRow struct {
	// Seq is the row's sequence as kivik's Seq() gives it: a JSON number's
	// digits ("12" from this server) or a JSON string's contents (CouchDB's
	// opaque "12-g1AAAA...").
	Seq string
	ID  string
	// Deleted is the row's "deleted" flag: a _deleted tombstone, not
	// LiveSync's soft delete (a "deleted": true field inside Doc).
	Deleted bool
	// Doc is the winning revision's body, with _id and _rev.
	Doc json.RawMessage
}

// ReadChanges reads a _changes?include_docs=true&style=all_docs dump (plain
// or gzipped) and returns its rows in the dump's order, which is seq order.
func ReadChanges(tb testing.TB, dumpPath string) []ChangeRow {
	tb.Helper()
	var dump struct {
		Results []struct {
			Seq     json.RawMessage `json:"seq"`
			ID      string          `json:"id"`
			Deleted bool            `json:"deleted"`
			Doc     json.RawMessage `json:"doc"`
		} `json:"results"`
	}
	if err := readDump(dumpPath, &dump); err != nil {
		tb.Fatal(err)
	}
	rows := make([]ChangeRow, len(dump.Results))
	for i, r := range dump.Results {
		seq, err := seqString(r.Seq)
		if err != nil {
			tb.Fatalf("%s: row %d (%s): %v", dumpPath, i, r.ID, err)
		}
		rows[i] = ChangeRow{Seq: seq, ID: r.ID, Deleted: r.Deleted, Doc: r.Doc}
	}
	return rows
}

// seqString turns a JSON sequence into the string kivik would report.
func seqString(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("bad seq %s: %w", raw, err)
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case float64:
		return string(bytes.TrimSpace(raw)), nil
	default:
		return "", fmt.Errorf("bad seq %s", raw)
	}
}

// ReplayChanges writes rows to db in order with _bulk_docs and new_edits:false,
// at most batch docs per request, so the database's _changes lists them in
// the same order (notes before their chunks, as they first arrived) and each
// doc keeps its _rev; _deleted tombstones replay as tombstones. Pass
// rows[from:to] to replay part of a dump. The server writes the docs of a
// new_edits:false request in _id order, so a request is also cut wherever the
// next id does not sort after the previous one.
func (s *Server) ReplayChanges(tb testing.TB, db string, rows []ChangeRow, batch int) {
	tb.Helper()
	if batch < 1 {
		tb.Fatalf("ReplayChanges: batch %d < 1", batch)
	}
	docs := make([]json.RawMessage, 0, min(batch, len(rows)))
	for i, r := range rows {
		if !hasDoc(r.Doc) {
			tb.Fatalf("ReplayChanges: row %s (seq %s) has no doc; dump _changes with include_docs=true", r.ID, r.Seq)
		}
		if len(docs) == batch || (len(docs) > 0 && !jsLess(rows[i-1].ID, r.ID)) {
			if err := s.bulkDocs(db, docs); err != nil {
				tb.Fatal(err)
			}
			docs = docs[:0]
		}
		docs = append(docs, r.Doc)
	}
	if len(docs) > 0 {
		if err := s.bulkDocs(db, docs); err != nil {
			tb.Fatal(err)
		}
	}
}

// jsLess reports a < b as JavaScript compares strings (by UTF-16 code unit),
// which is how the server sorts a request's docs.
func jsLess(a, b string) bool {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b))) < 0
}

// bulkDocs writes docs as they are, revisions included.
func (s *Server) bulkDocs(db string, docs []json.RawMessage) error {
	req := struct {
		Docs     []json.RawMessage `json:"docs"`
		NewEdits bool              `json:"new_edits"`
	}{Docs: docs}
	// CouchDB answers [] for new_edits:false; anything listed is a failure.
	var res []struct {
		ID     string `json:"id"`
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if err := s.do(http.MethodPost, url.PathEscape(db)+"/_bulk_docs", req, &res); err != nil {
		return fmt.Errorf("bulk write of %d docs to %s: %w", len(docs), db, err)
	}
	for _, r := range res {
		if r.Error != "" {
			return fmt.Errorf("bulk write to %s: %s: %s: %s", db, r.ID, r.Error, r.Reason)
		}
	}
	return nil
}

// PutLocal writes raw as the _local document id ("_local/..."), replacing the
// doc there if any. _local docs are not in _all_docs or _changes dumps. The
// dump's _rev is dropped because a _local doc can only be written over its
// current rev, so the doc gets this database's next one ("0-1" when new).
func (s *Server) PutLocal(tb testing.TB, db, id string, raw []byte) {
	tb.Helper()
	if err := s.putLocal(db, id, raw); err != nil {
		tb.Fatal(err)
	}
}

func (s *Server) putLocal(db, id string, raw []byte) error {
	name, ok := strings.CutPrefix(id, "_local/")
	if !ok || name == "" {
		return fmt.Errorf("PutLocal: id %q is not _local/<name>", id)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("PutLocal %s: %w", id, err)
	}
	doc["_id"], _ = json.Marshal(id)
	delete(doc, "_rev")
	path := url.PathEscape(db) + "/_local/" + url.PathEscape(name)
	var cur struct {
		Rev string `json:"_rev"`
	}
	err := s.do(http.MethodGet, path, nil, &cur)
	var se *statusError
	switch {
	case err == nil:
		doc["_rev"], _ = json.Marshal(cur.Rev)
	case errors.As(err, &se) && se.status == http.StatusNotFound:
	default:
		return fmt.Errorf("PutLocal %s: %w", id, err)
	}
	if err := s.do(http.MethodPut, path, doc, nil); err != nil {
		return fmt.Errorf("PutLocal %s: %w", id, err)
	}
	return nil
}

// LoadFixture loads the dump set <dir>/<name>.*: <name>.all_docs.json (or
// .json.gz) through LoadAllDocs, then, when present,
// <name>.local_sync_parameters.json as LocalSyncParametersID and
// <name>.local_milestone.json as LocalMilestoneID. It returns the number of
// docs LoadAllDocs wrote.
func (s *Server) LoadFixture(tb testing.TB, db, dir, name string) int {
	tb.Helper()
	n, err := s.Load(db, dir, name)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// Load is LoadFixture for a program: it returns what went wrong instead of
// failing a test.
func (s *Server) Load(db, dir, name string) (int, error) {
	base := filepath.Join(dir, name)
	dump := base + ".all_docs.json"
	if _, err := os.Stat(dump); errors.Is(err, fs.ErrNotExist) {
		dump += ".gz"
	}
	n, err := s.loadAllDocs(db, dump)
	if err != nil {
		return 0, err
	}
	for _, l := range []struct{ suffix, id string }{
		{".local_sync_parameters.json", LocalSyncParametersID},
		{".local_milestone.json", LocalMilestoneID},
	} {
		raw, err := os.ReadFile(base + l.suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if err := s.putLocal(db, l.id, raw); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// DBInfo returns db's update_seq, as kivik reports sequences (see
// ChangeRow.Seq), and doc_count (live docs; tombstones are not counted).
func (s *Server) DBInfo(tb testing.TB, db string) (updateSeq string, docCount int) {
	tb.Helper()
	var info struct {
		UpdateSeq json.RawMessage `json:"update_seq"`
		DocCount  int             `json:"doc_count"`
	}
	if err := s.do(http.MethodGet, url.PathEscape(db), nil, &info); err != nil {
		tb.Fatalf("DBInfo %s: %v", db, err)
	}
	seq, err := seqString(info.UpdateSeq)
	if err != nil {
		tb.Fatalf("DBInfo %s: %v", db, err)
	}
	return seq, info.DocCount
}
