package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/tstest/couchtest"
)

func TestMain(m *testing.M) { os.Exit(couchtest.Main(m)) }

// getDoc reads a document of db as the admin.
func getDoc(t *testing.T, srv *couchtest.Server, db, id string) (map[string]any, int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.DBURL(db)+"/"+url.PathEscape(id), nil)
	req.SetBasicAuth(srv.User, srv.Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&doc)
	return doc, resp.StatusCode
}

// load sets up a vault from a folder (hidden folders left out, one note
// metadata only), put writes and rewrites a note from stdin and from a
// file, delete soft-deletes it.
func TestLoadPutDelete(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t) + "-vault"
	dbURL := srv.AuthURL(db)
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, srv.DBURL(db), nil)
		req.SetBasicAuth(srv.User, srv.Password)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	dir := t.TempDir()
	for path, text := range map[string]string{
		"Home.md":              "# Home\n",
		"Recipes/Bread.md":     "# Bread\n",
		"Projects/Half.md":     "# Half\n",
		".obsidian/app.json":   "{}",
		"attachments/tiny.png": "\x89PNG\r\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"load", "-db", dbURL, "-metadata-only", "Projects/Half.md", dir}, nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "loaded 4 files") {
		t.Errorf("load said %q", out.String())
	}
	if _, code := getDoc(t, srv, db, ".obsidian/app.json"); code != http.StatusNotFound {
		t.Errorf(".obsidian/app.json was loaded (%d)", code)
	}
	if doc, _ := getDoc(t, srv, db, "attachments/tiny.png"); doc["type"] != "newnote" {
		t.Errorf("the attachment: %v, want a binary note", doc)
	}
	half, _ := getDoc(t, srv, db, "projects/half.md")
	if children := half["children"].([]any); len(children) != 1 {
		t.Fatalf("the metadata-only note: %v", half)
	} else if _, code := getDoc(t, srv, db, children[0].(string)); code != http.StatusNotFound {
		t.Errorf("the metadata-only note's chunk was written (%d)", code)
	}
	if err := run(ctx, []string{"load", "-db", dbURL, dir}, nil, &out, &out); err == nil || !strings.Contains(err.Error(), "412") {
		t.Errorf("load into an existing database: %v, want a refusal", err)
	}

	if err := run(ctx, []string{"put", "-db", dbURL, "Inbox/From my phone.md"}, strings.NewReader("# From my phone\n"), &out, &out); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "note.md")
	if err := os.WriteFile(file, []byte("# From my phone\n\nEdited.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"put", "-db", dbURL, "-notes-first", "Inbox/From my phone.md", file}, nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	doc, _ := getDoc(t, srv, db, "inbox/from my phone.md")
	if !strings.HasPrefix(doc["_rev"].(string), "2-") || doc["size"] != 25.0 {
		t.Errorf("after two puts: %v", doc)
	}
	if err := run(ctx, []string{"delete", "-db", dbURL, "Inbox/From my phone.md"}, nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	if doc, _ := getDoc(t, srv, db, "inbox/from my phone.md"); doc["deleted"] != true {
		t.Errorf("after delete: %v", doc)
	}
}

// Mistakes are errors that say what was wrong, before anything is written.
func TestMistakes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "name a command"},
		{[]string{"push"}, `unknown command "push"`},
		{[]string{"put"}, "put PATH [FILE]"},
		{[]string{"put", "-db", "127.0.0.1:5984", "A.md"}, "want a database URL"},
		{[]string{"put", "-db", "http://127.0.0.1:5984/", "A.md"}, "want a database URL"},
		{[]string{"put", "/etc/A.md"}, "a vault path is relative"},
		{[]string{"put", "Notes/../A.md"}, `did you mean "A.md"`},
		{[]string{"put", "C:/A.md"}, "no ':'"},
		{[]string{"put", "A.md", "/nonexistent/file.md"}, "read the note's text"},
		{[]string{"delete"}, "delete PATH"},
		{[]string{"load", "/nonexistent/vault"}, "is not a folder"},
		{[]string{"demo", "extra"}, "demo takes flags only"},
	} {
		var out bytes.Buffer
		err := run(ctx, tc.args, strings.NewReader(""), &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
