package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes vaultask with args in a clean environment plus env.
func run(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := NewMain(&stdout, &stderr, env).Run(context.Background(), args)
	return stdout.String(), stderr.String(), err
}

func writeVault(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestIndexFromDirThenStats(t *testing.T) {
	vault := writeVault(t, map[string]string{
		"Home.md":               "# Home\n\nSee [[Recipes/Bread]] and [[Missing]]. #start\n",
		"Recipes/Bread.md":      "# Bread\n\nFlour, water, salt.\n",
		"Tastings/Barolo.md":    "Tar and roses.\n",
		"00 inbox/Draft.md":     "not indexed\n",
		"Attachments/pixel.png": "\x89PNG",
		"Archive/.trash/Old.md": "not indexed\n",
	})
	dbPath := filepath.Join(t.TempDir(), "data", "vaultask.db")
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"VAULTASK_INDEX__PATH=" + dbPath,
		`VAULTASK_SENSITIVITY__PERSONAL_PATHS=["Tastings/**","Nowhere/**"]`,
		"VAULTASK_OVERRIDES_FILE=" + filepath.Join(t.TempDir(), "none.json"),
	}

	// A dry run on a fresh index plans and writes nothing, not even the file.
	out, _, err := run(t, env, "index", "--from-dir", vault, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "add Recipes/Bread.md") || !strings.Contains(out, "3 to add") {
		t.Fatalf("dry run output:\n%s", out)
	}
	if _, err := os.Stat(dbPath); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dry run created the index: %v", err)
	}

	out, stderr, err := run(t, env, "index", "--from-dir", vault)
	if err != nil {
		t.Fatalf("index: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "3 added") || !strings.Contains(out, "embedded 3 chunks with builtin/use-lite") {
		t.Fatalf("index output: %s", out)
	}
	if !strings.Contains(stderr, "Nowhere/**") {
		t.Fatalf("no warning for the pattern that matches nothing; stderr:\n%s", stderr)
	}

	out, _, err = run(t, env, "stats", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("stats --json is not one JSON object: %v\n%s", err, out)
	}
	for key, want := range map[string]float64{"notes": 3, "chunks": 3, "vectors": 3, "embedding_backlog": 0, "personal_notes": 1, "links_resolved": 1, "links_unresolved": 1} {
		if st[key] != want {
			t.Errorf("stats[%q] = %v, want %v", key, st[key], want)
		}
	}

	// Delete a note and edit one: the dry run reports both and writes nothing.
	if err := os.Remove(filepath.Join(vault, "Recipes", "Bread.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vault, "Home.md"), []byte("# Home\n\nNew text.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(dbPath)
	out, _, err = run(t, env, "index", "--from-dir", vault, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"remove Recipes/Bread.md", "change Home.md", "1 to remove", "1 to change"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if after, _ := os.ReadFile(dbPath); !bytes.Equal(before, after) {
		t.Error("dry run changed the index file")
	}
	out, _, err = run(t, env, "index", "--from-dir", vault)
	if err != nil || !strings.Contains(out, "1 changed") || !strings.Contains(out, "1 removed") {
		t.Fatalf("second index: %v %s", err, out)
	}

	out, _, err = run(t, env, "stats")
	if err != nil || !strings.Contains(out, "notes:") || !strings.Contains(out, "2 (1 open, 1 personal)") {
		t.Fatalf("stats: %v\n%s", err, out)
	}
}

// Without its embedder the index still builds, searchable by full text,
// with the chunks left on the embedding backlog.
func TestIndexWithoutEmbedderIsFTSOnly(t *testing.T) {
	vault := writeVault(t, map[string]string{"a.md": "alpha\n", "b.md": "beta\n"})
	env := []string{
		"VAULTASK_INDEX__PATH=" + filepath.Join(t.TempDir(), "i.db"),
		"VAULTASK_MODELS__BUILTIN_DIR=" + filepath.Join(t.TempDir(), "no-model-here"),
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json",
	}
	out, stderr, err := run(t, env, "index", "--from-dir", vault)
	if err != nil || !strings.Contains(out, "2 added") || !strings.Contains(stderr, "full text only") {
		t.Fatalf("index without a model: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	out, _, err = run(t, env, "stats", "--json")
	if err != nil || !strings.Contains(out, `"embedding_backlog":2`) || !strings.Contains(out, `"vectors":0`) {
		t.Fatalf("stats: %v %s", err, out)
	}
}

func TestStatsWithoutIndexSaysWhatToDo(t *testing.T) {
	env := []string{"VAULTASK_INDEX__PATH=" + filepath.Join(t.TempDir(), "absent.db"), "VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json"}
	_, _, err := run(t, env, "stats")
	if err == nil || !strings.Contains(err.Error(), "vaultask index") {
		t.Fatalf("stats without an index: %v", err)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	env := []string{"VAULTASK_RETRIEVAL__FINAL_TOPK=3", "VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json"}
	_, _, err := run(t, env, "stats")
	if err == nil || !strings.Contains(err.Error(), "VAULTASK_RETRIEVAL__FINAL_TOPK") {
		t.Fatalf("unknown env key: %v", err)
	}
}

func TestHostedEmbeddingRefusedAtStartup(t *testing.T) {
	env := []string{"VAULTASK_MODELS__EMBEDDING=openrouter/openai/text-embedding-3-small", "VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json"}
	_, _, err := run(t, env, "stats")
	if err == nil || !strings.Contains(err.Error(), "models.embedding") || !strings.Contains(err.Error(), "hosted API") {
		t.Fatalf("hosted embedding model: %v", err)
	}
}

func TestWebProviderKeyIsRequiredWhenEnabled(t *testing.T) {
	env := []string{"VAULTASK_WEB__ENABLED=true", "VAULTASK_WEB__PROVIDER=brave", "VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json"}
	_, _, err := run(t, env, "stats")
	if err == nil || !strings.Contains(err.Error(), "VAULTASK_BRAVE_API_KEY") {
		t.Fatalf("brave without its key: %v", err)
	}
}

func TestUsage(t *testing.T) {
	if _, stderr, err := run(t, nil); !errors.Is(err, errUsage) || !strings.Contains(stderr, "index") {
		t.Fatalf("no args: %v\n%s", err, stderr)
	}
	if _, stderr, err := run(t, nil, "index", "--help"); err != nil || !strings.Contains(stderr, "--from-dir") {
		t.Fatalf("index --help: %v\n%s", err, stderr)
	}
	if _, _, err := run(t, nil, "frobnicate"); err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Fatalf("unknown command: %v", err)
	}
}
