package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// run executes vaultask with args in a clean environment plus env.
func run(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := NewMain(&stdout, &stderr, env).Run(context.Background(), args)
	return stdout.String(), stderr.String(), err
}

// varying are the parts of command output that differ from run to run,
// each with the placeholder the golden files hold instead: durations, rates,
// timestamps, and the index file's size, which is SQLite's business; and
// the embedding's progress lines, which a slow machine prints and a fast
// one does not (TestIndexShowsEmbeddingProgress reads them).
var varying = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?m)^embedding: .*\n`), ""},
	{regexp.MustCompile(`\bin (\d+h)?(\d+m)?\d+(\.\d+)?(s|ms|µs|ns)\b`), "in DURATION"},
	{regexp.MustCompile(`\(\d+ chunks/s\)`), "(RATE chunks/s)"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "TIMESTAMP"},
	{regexp.MustCompile(`\d+\.\d MiB`), "SIZE MiB"},
	{regexp.MustCompile(`"file_bytes":\d+`), `"file_bytes":SIZE`},
}

// longNumber is a number with more decimals than text output shows, as
// JSON prints them. Vector distances differ in their last digits between
// the built-in model's CPU kernels (AVX-512, AVX2, pure Go), so golden
// files hold such numbers to the four decimals text output gives scores.
var longNumber = regexp.MustCompile(`\d+\.\d{5,}`)

// golden compares a command's output with the file testdata/<test>/<name>
// after normalising it: each temporary path in paths becomes its
// placeholder (paths maps path to placeholder, such as $VAULT), then the
// varying parts theirs. go test -update rewrites the file.
func golden(t *testing.T, name, out string, paths map[string]string) {
	t.Helper()
	olds := slices.Collect(maps.Keys(paths))
	slices.SortFunc(olds, func(a, b string) int { return len(b) - len(a) }) // a path before any prefix of it
	var pairs []string
	for _, p := range olds {
		pairs = append(pairs, p, paths[p])
	}
	got := strings.NewReplacer(pairs...).Replace(out)
	for _, v := range varying {
		got = v.re.ReplaceAllString(got, v.with)
	}
	got = longNumber.ReplaceAllStringFunc(got, func(s string) string {
		x, _ := strconv.ParseFloat(s, 64) // the pattern matches only numbers
		return strconv.FormatFloat(x, 'f', 4, 64)
	})
	file := filepath.Join("testdata", t.Name(), filepath.FromSlash(name))
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -run '%s' -update writes it)", err, t.Name())
	}
	if diff := cmp.Diff(strings.SplitAfter(string(want), "\n"), strings.SplitAfter(got, "\n")); diff != "" {
		t.Errorf("%s differs from the output (-want +got; go test -run '%s' -update rewrites it):\n%s", file, t.Name(), diff)
	}
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
	paths := map[string]string{vault: "$VAULT", dbPath: "$INDEX"}

	// A dry run on a fresh index plans and writes nothing, not even the file.
	out, _, err := run(t, env, "index", "--from-dir", vault, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "dry-run-fresh/stdout", out, paths)
	if _, err := os.Stat(dbPath); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dry run created the index: %v", err)
	}

	out, stderr, err := run(t, env, "index", "--from-dir", vault)
	if err != nil {
		t.Fatalf("index: %v\n%s", err, stderr)
	}
	golden(t, "index/stdout", out, paths)
	golden(t, "index/stderr", stderr, paths)
	if !strings.Contains(stderr, "Nowhere/**") {
		t.Fatalf("no warning for the pattern that matches nothing; stderr:\n%s", stderr)
	}

	out, _, err = run(t, env, "stats", "--json")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "stats-json/stdout", out, paths)

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
	golden(t, "dry-run-changes/stdout", out, paths)
	if after, _ := os.ReadFile(dbPath); !bytes.Equal(before, after) {
		t.Error("dry run changed the index file")
	}
	out, _, err = run(t, env, "index", "--from-dir", vault)
	if err != nil {
		t.Fatalf("second index: %v", err)
	}
	golden(t, "reindex/stdout", out, paths)

	out, _, err = run(t, env, "stats")
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	golden(t, "stats/stdout", out, paths)
}

// Without its embedder the index still builds, searchable by full text,
// with the chunks left on the embedding backlog.
func TestIndexWithoutEmbedderIsFTSOnly(t *testing.T) {
	vault := writeVault(t, map[string]string{"a.md": "alpha\n", "b.md": "beta\n"})
	dbPath := filepath.Join(t.TempDir(), "i.db")
	env := []string{
		"VAULTASK_INDEX__PATH=" + dbPath,
		"VAULTASK_MODELS__BUILTIN_DIR=" + filepath.Join(t.TempDir(), "no-model-here"),
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json",
	}
	paths := map[string]string{vault: "$VAULT", dbPath: "$INDEX"}
	out, stderr, err := run(t, env, "index", "--from-dir", vault)
	if err != nil {
		t.Fatalf("index without a model: %v\nstderr: %s", err, stderr)
	}
	golden(t, "index/stdout", out, paths)
	if !strings.Contains(stderr, "full text only") {
		t.Fatalf("index without a model does not say it is full text only; stderr:\n%s", stderr)
	}
	out, _, err = run(t, env, "stats", "--json")
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	golden(t, "stats-json/stdout", out, paths)
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
	_, stderr, err := run(t, nil)
	if !errors.Is(err, errUsage) {
		t.Fatalf("no args: %v\n%s", err, stderr)
	}
	golden(t, "no-args/stderr", stderr, nil)
	_, stderr, err = run(t, nil, "index", "--help")
	if err != nil {
		t.Fatalf("index --help: %v\n%s", err, stderr)
	}
	golden(t, "index-help/stderr", stderr, nil)
	if _, _, err := run(t, nil, "frobnicate"); err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Fatalf("unknown command: %v", err)
	}
}

// version prints the stamped version; healthcheck passes on a 200 from
// /healthz and fails, saying what answered, otherwise.
func TestVersionAndHealthcheck(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v1.2.3"
	stdout, _, err := run(t, nil, "version")
	if err != nil || !strings.HasPrefix(stdout, "vaultask v1.2.3 (go") {
		t.Errorf("version: %q, %v", stdout, err)
	}
	healthy := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" || !healthy {
			http.Error(w, "no", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	env := []string{"VAULTASK_API__LISTEN=:" + port, "VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json"}
	if host != "127.0.0.1" {
		t.Fatalf("httptest listens on %s", host)
	}
	if stdout, _, err := run(t, env, "healthcheck"); err != nil || !strings.Contains(stdout, "ok: http://127.0.0.1:"+port+"/healthz") {
		t.Errorf("healthcheck from api.listen %q: %q, %v", ":"+port, stdout, err)
	}
	healthy = false
	if _, _, err := run(t, nil, "healthcheck", "--url", srv.URL+"/healthz"); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("healthcheck of an unhealthy server: %v, want the 503 named", err)
	}
}
