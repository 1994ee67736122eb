package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A browser may set the generation and rerank models, the web search
// switch and provider and the retrieval tuning, and nothing else: each
// refusal says why, and every key it may set is a real key that is not a
// secret.
func TestEditable(t *testing.T) {
	for _, c := range []struct {
		path    string
		ok      bool
		wantWhy string
	}{
		{"models.generation", true, ""},
		{"models.rerank", true, ""},
		{"web.enabled", true, ""},
		{"web.provider", true, ""},
		{"retrieval.final_top_k", true, ""},
		{"vault.url", false, "vault.url is not editable here: where the vault"},
		{"vault.password", false, "every secret"},
		{"api.admin_key", false, "every secret"},
		{"index.path", false, "index.path is not editable here"},
		{"models.embedding", false, "vaultask index --rebuild"},
		{"models.embedding_dim", false, "embedding model"},
		{"models.builtin_dir", false, "embedding model"},
		{"web.max_results", false, "set it in config.yaml or VAULTASK_WEB__MAX_RESULTS"},
		{"corpus.include", false, "VAULTASK_CORPUS__INCLUDE"},
		{"nope.x", false, "VAULTASK_NOPE__X"},
		{"", false, "not editable here"},
	} {
		ok, why := Editable(c.path)
		if ok != c.ok || !strings.Contains(why, c.wantWhy) || (ok && why != "") {
			t.Errorf("Editable(%q) = %v, %q; want %v and a reason with %q", c.path, ok, why, c.ok, c.wantWhy)
		}
	}
	editable := 0
	for _, f := range fields {
		if ok, _ := Editable(f.path()); ok {
			editable++
			if f.secret() {
				t.Errorf("%s is a secret and editable", f.path())
			}
		}
	}
	if editable == 0 {
		t.Error("no key of Config is editable")
	}
}

func mustOpenOverrides(t *testing.T, path string) *Overrides {
	t.Helper()
	o, err := OpenOverrides(path)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func mustCurrent(t *testing.T, o *Overrides) (string, bool) {
	t.Helper()
	doc, pending, err := o.Current()
	if err != nil {
		t.Fatal(err)
	}
	return string(doc), pending
}

func accept([]byte) error { return nil }

// Save merges a change into the file as it is now, keeping the keys it
// does not name, and replaces it atomically with owner-only permissions;
// Current reports the document canonically and whether it differs in
// meaning from the file at start.
func TestOverridesSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "overrides.json")
	if err := os.WriteFile(path, []byte("{ \"log\": {\"level\": \"debug\"} }"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := mustOpenOverrides(t, path)
	if err := os.WriteFile(path, []byte(`{"log":{"level":"debug"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, pending := mustCurrent(t, o); pending {
		t.Error("pending with the file saying what it said at start")
	}
	var checked string
	err := o.Save(map[string]any{"retrieval.final_top_k": json.Number("6"), "web.enabled": true}, func(doc []byte) error {
		checked = string(doc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"log\": {\n    \"level\": \"debug\"\n  },\n  \"retrieval\": {\n    \"final_top_k\": 6\n  },\n  \"web\": {\n    \"enabled\": true\n  }\n}\n"
	if got, pending := mustCurrent(t, o); got != want || !pending {
		t.Errorf("after a save Current = %q, pending %v; want %q, pending", got, pending, want)
	}
	if checked != want {
		t.Errorf("check saw %q, want the whole document %q", checked, want)
	}
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("file holds %q, want %q", b, want)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v (%v), want 0600", info.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the overrides file alone", len(entries))
	}
	// A save that puts the file back as booted is no longer pending.
	if err := os.WriteFile(path, []byte(`{"log":{"level":"debug"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, pending := mustCurrent(t, o); pending {
		t.Error("pending with the file back as booted")
	}
}

// A change check refuses, a key a browser may not set, or a file that is
// not an overrides document leaves the file as it was; the check's own
// error comes back as it is, so the caller can tell it from a failed read.
func TestOverridesSaveRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "overrides.json")
	o := mustOpenOverrides(t, path)
	if got, pending := mustCurrent(t, o); got != "{}\n" || pending {
		t.Errorf("no file: Current = %q, pending %v; want {} and not pending", got, pending)
	}
	invalid := errors.New("retrieval.final_top_k (0) must be >= 1")
	if err := o.Save(map[string]any{"retrieval.final_top_k": json.Number("0")}, func([]byte) error { return invalid }); err != invalid {
		t.Errorf("Save with a refusing check = %v, want the check's error", err)
	}
	called := false
	err := o.Save(map[string]any{"vault.url": "http://evil:5984"}, func([]byte) error { called = true; return nil })
	if err == nil || called || !strings.Contains(err.Error(), "vault.url is not editable here") {
		t.Errorf("Save of vault.url = %v (check called %v), want a refusal naming the key before any check", err, called)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused change wrote the file: %v", err)
	}

	if err := os.WriteFile(path, []byte(`{"retrieval":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.Current(); err == nil || !strings.Contains(err.Error(), path+" is not an overrides document") {
		t.Errorf("Current of a broken file = %v, want an error naming it", err)
	}
	if err := o.Save(map[string]any{"web.enabled": true}, accept); err == nil {
		t.Error("Save over a broken file succeeded")
	}
	if b, _ := os.ReadFile(path); string(b) != `{"retrieval":` {
		t.Errorf("Save over a broken file changed it to %q", b)
	}
	// Started with a broken file, any document that reads is pending.
	booted := mustOpenOverrides(t, path)
	if err := os.WriteFile(path, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, pending := mustCurrent(t, booted); !pending {
		t.Error("started with a broken file: a readable one is not pending")
	}
}
