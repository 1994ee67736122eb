package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/couchtest"
)

// TestMain runs the tests, or, with VAULTASKTEST_MAIN=1 in the environment,
// is vaultask itself: tests re-run this binary as another user or process.
func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		return
	}
	os.Exit(couchtest.Main(m))
}

// livesyncFixtures are LiveSync's own documents, beside the decoder.
const livesyncFixtures = "../../feed/livesync/testdata"

// couchEnv configures vaultask for database db of the test server, with a
// fresh index and no embedding model (full text only).
func couchEnv(t testing.TB, srv *couchtest.Server, db string) []string {
	t.Helper()
	return []string{
		"VAULTASK_VAULT__URL=" + srv.URL,
		"VAULTASK_VAULT__DATABASE=" + db,
		"VAULTASK_VAULT__USER=" + srv.User,
		"VAULTASK_VAULT__PASSWORD=" + srv.Password,
		"VAULTASK_INDEX__PATH=" + filepath.Join(t.TempDir(), "vaultask.db"),
		"VAULTASK_MODELS__BUILTIN_DIR=" + filepath.Join(t.TempDir(), "no-model-here"),
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json",
	}
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// `index` and `reconcile` (with and without --dry-run) against the test
// CouchDB, then `follow` picking up a note LiveSync writes, until SIGINT.
func TestCouchIndexReconcileFollow(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadFixture(t, db, livesyncFixtures, "vault")
	env := couchEnv(t, srv, db)
	dbPath := envValue(env, "VAULTASK_INDEX__PATH")

	out, _, err := run(t, env, "index", "--dry-run")
	if err != nil || !strings.Contains(out, "add Notes/Shopping List.md") || !strings.Contains(out, "add _private/Calculus.md") || !strings.Contains(out, "2 to add") {
		t.Fatalf("index --dry-run: %v\n%s", err, out)
	}
	if _, err := os.Stat(dbPath); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the dry run created the index: %v", err)
	}
	out, stderr, err := run(t, env, "index")
	if err != nil || !strings.Contains(out, "indexed 2 notes") || !strings.Contains(out, "2 added") {
		t.Fatalf("index: %v\n%s\n%s", err, out, stderr)
	}
	out, _, err = run(t, env, "reconcile", "--dry-run")
	if err != nil || !strings.Contains(out, "0 to add") || !strings.Contains(out, "2 unchanged") {
		t.Fatalf("reconcile --dry-run: %v\n%s", err, out)
	}

	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var fout, ferr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- NewMain(&fout, &ferr, env).Run(ctx, []string{"follow"}) }()

	// As LiveSync pushes a new note: its chunk and its metadata together.
	text := "# Groceries\n\nApples and pears.\n"
	bulkDocs(t, srv, db,
		map[string]any{"_id": "h:groceries1", "type": "leaf", "data": text},
		map[string]any{"_id": "groceries.md", "path": "Groceries.md", "type": "plain", "children": []string{"h:groceries1"},
			"ctime": 1764480000000, "mtime": 1764480000000, "size": len(text), "eden": map[string]any{}})
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _, err := run(t, env, "stats", "--json")
		var st struct {
			Notes int `json:"notes"`
		}
		if err == nil && json.Unmarshal([]byte(out), &st) == nil && st.Notes == 3 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("follow stopped: %v\n%s", err, ferr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new note never reached the index: %s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	interrupt()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("follow after SIGINT: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("follow did not stop after SIGINT")
	}
	if !strings.Contains(ferr.String(), "stopped following") {
		t.Errorf("follow's log lacks the clean stop:\n%s", ferr.String())
	}

	out, _, err = run(t, env, "reconcile")
	if err != nil || !strings.Contains(out, "indexed 3 notes") || !strings.Contains(out, "3 unchanged") {
		t.Fatalf("reconcile after following: %v\n%s", err, out)
	}
}

// An end-to-end encrypted vault needs its passphrase, from the environment.
func TestCouchEncryptedVaultNeedsPassphrase(t *testing.T) {
	srv := couchtest.Start(t)
	db := srv.NewDB(t)
	srv.LoadFixture(t, db, livesyncFixtures, "vaultenc")
	env := couchEnv(t, srv, db)
	if _, _, err := run(t, env, "index"); err == nil || !strings.Contains(err.Error(), "VAULTASK_VAULT__PASSPHRASE") {
		t.Fatalf("index of an encrypted vault without a passphrase: %v", err)
	}
	env = append(env, "VAULTASK_VAULT__PASSPHRASE=correct horse battery staple")
	if out, _, err := run(t, env, "index"); err != nil || !strings.Contains(out, "1 added") {
		t.Fatalf("index with the passphrase: %v\n%s", err, out)
	}
}

// A folder vault follows too.
func TestFollowFolder(t *testing.T) {
	vault := writeVault(t, map[string]string{"a.md": "alpha\n"})
	env := []string{
		"VAULTASK_VAULT__SOURCE=folder",
		"VAULTASK_VAULT__PATH=" + vault,
		"VAULTASK_INDEX__PATH=" + filepath.Join(t.TempDir(), "i.db"),
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json",
	}
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var fout, ferr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- NewMain(&fout, &ferr, env).Run(ctx, []string{"follow"}) }()
	if err := os.WriteFile(filepath.Join(vault, "b.md"), []byte("beta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		// The follower indexes b.md and the background vectorizer embeds it.
		out, _, _ := run(t, env, "stats", "--json")
		if strings.Contains(out, `"notes":2`) && strings.Contains(out, `"vectors":2`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b.md never reached the index with its vector: %s\n%s", out, ferr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	interrupt()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// bulkDocs writes documents as a client does (new_edits on).
func bulkDocs(t *testing.T, srv *couchtest.Server, db string, docs ...map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"docs": docs})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, srv.DBURL(db)+"/_bulk_docs", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(srv.User, srv.Password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("_bulk_docs: %s", resp.Status)
	}
}
