package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/rag/web"
)

// askVault is a small vault indexed by the real `index --from-dir`, with a
// personal note that matches the question better than any open one.
func askVault(t *testing.T) []string {
	t.Helper()
	vault := writeVault(t, map[string]string{
		"en/Plugins/File recovery.md":          "# File recovery\n\nFile recovery keeps snapshots so you can recover a deleted note.\n\n## Restore a snapshot\n\nOpen **Settings → File recovery** and pick a snapshot to restore the deleted note.\n",
		"en/Files and folders/Manage notes.md": "# Manage notes\n\nA deleted note goes to the trash. See [[File recovery]].\n",
		"en/Plugins/Backlinks.md":              "# Backlinks\n\nSee which notes link to the active note.\n",
		"Private/Diary.md":                     "Recover deleted note: I deleted my diary note, recover deleted note secret-diary-text.\n",
	})
	env := []string{
		"VAULTASK_INDEX__PATH=" + filepath.Join(t.TempDir(), "vaultask.db"),
		`VAULTASK_SENSITIVITY__PERSONAL_PATHS=["Private/**"]`,
		"VAULTASK_OVERRIDES_FILE=" + filepath.Join(t.TempDir(), "none.json"),
	}
	if out, stderr, err := run(t, env, "index", "--from-dir", vault); err != nil || !strings.Contains(out, "4 added") {
		t.Fatalf("index: %v\n%s\n%s", err, out, stderr)
	}
	return env
}

func TestAskEndToEnd(t *testing.T) {
	env := askVault(t)
	const question = "How do I recover a deleted note?"

	// A dry run lists ranked hits with provenance, distance, sensitivity and
	// path; with allow_web (the default) personal notes are not even read.
	out, _, err := run(t, env, "ask", question, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "dry-run/stdout", out, nil)
	if strings.Contains(out, "Private/Diary.md") {
		t.Fatalf("allow_web dry run shows a personal note:\n%s", out)
	}
	out, _, err = run(t, env, "ask", "--dry-run", "--allow-web=false", question)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "dry-run-vault-only/stdout", out, nil)
	if !strings.Contains(out, "Private/Diary.md") || !strings.Contains(out, "personal") {
		t.Fatalf("vault-only dry run should include the personal note:\n%s", out)
	}

	// No API key: the answer is extractive, said so, and streamed to stdout.
	out, stderr, err := run(t, env, "ask", question)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "extractive/stdout", out, nil)
	golden(t, "extractive/stderr", stderr, nil)
	if !strings.HasPrefix(out, rag.ExtractiveHeading) {
		t.Fatalf("extractive answer without its heading:\n%s", out)
	}
	if strings.Contains(out, "secret-diary-text") {
		t.Fatalf("personal text in an allow_web answer:\n%s", out)
	}
	if !strings.Contains(stderr, "no generation model") || !strings.Contains(stderr, "VAULTASK_OPENROUTER_API_KEY") {
		t.Fatalf("stderr should say why the answer is extractive:\n%s", stderr)
	}

	// --json --trace: one object with the hits, the answer and every stage.
	out, _, err = run(t, env, "ask", question, "--json", "--trace")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "json-trace/stdout", out, nil)
	var got struct {
		Scope string `json:"scope"`
		Hits  []struct {
			Path, Citation, Sensitivity string
			Sources                     []string
		} `json:"hits"`
		Answer struct {
			Text       string         `json:"text"`
			Extractive bool           `json:"extractive"`
			Citations  []rag.Citation `json:"citations"`
		} `json:"answer"`
		Trace struct {
			Stages []struct{ Name string } `json:"stages"`
		} `json:"trace"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if got.Scope != "open" || len(got.Hits) == 0 || !got.Answer.Extractive || len(got.Answer.Citations) == 0 {
		t.Fatalf("--json: %+v", got)
	}
	var stages []string
	for _, s := range got.Trace.Stages {
		stages = append(stages, s.Name)
	}
	for _, want := range []string{"vector", "fts", "fusion", "diversity", "expand", "rerank", "quota", "assemble", "web", "answer"} {
		if !strings.Contains(strings.Join(stages, " "), want) {
			t.Errorf("trace lacks stage %q: %v", want, stages)
		}
	}

	// The dry run's JSON: the same keys, without an answer or a trace.
	out, _, err = run(t, env, "ask", question, "--dry-run", "--json")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "dry-run-json/stdout", out, nil)

	// --trace in text shows each stage after the answer.
	out, _, err = run(t, env, "ask", "--trace", question, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "dry-run-trace/stdout", out, nil)
}

func TestAskUsage(t *testing.T) {
	env := []string{"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json"}
	_, stderr, err := run(t, env, "ask")
	if !errors.Is(err, errUsage) {
		t.Fatalf("ask without a question: %v\n%s", err, stderr)
	}
	golden(t, "no-question/stderr", stderr, nil)
	_, stderr, err = run(t, env, "ask", "--help")
	if err != nil {
		t.Fatalf("ask --help: %v\n%s", err, stderr)
	}
	golden(t, "help/stderr", stderr, nil)
	env = append(env, "VAULTASK_INDEX__PATH="+filepath.Join(t.TempDir(), "absent.db"))
	if _, _, err := run(t, env, "ask", "anything"); err == nil || !strings.Contains(err.Error(), "vaultask index") {
		t.Fatalf("ask without an index: %v", err)
	}
	// An empty question says so, rather than printing the usage.
	for _, args := range [][]string{{"ask", ""}, {"ask", "  ", "--dry-run"}} {
		_, stderr, err := run(t, env, args...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "the question is empty") || strings.Contains(stderr, "Flags:") {
			t.Errorf("%q: %v\n%s", args, err, stderr)
		}
	}
	// A question that starts with '-' is parsed as a flag unless it follows --.
	if _, _, err := run(t, env, "ask", "-v", "or --verbose?"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "goes after --") {
		t.Errorf("ask -v …: %v, want a hint to use --", err)
	}
	if _, _, err := run(t, env, "ask", "--dry-run", "--", "-v", "or --verbose?"); err == nil || !strings.Contains(err.Error(), "vaultask index") {
		t.Errorf("ask -- -v …: %v, want the question accepted (and the missing index reported)", err)
	}
}

func TestParseQuestionAfterDoubleDash(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"how", "--dry-run", "now"}, "how now"},
		{[]string{"--", "-x", "--dry-run"}, "-x --dry-run"},
		{[]string{"why", "--", "-x"}, "why -x"},
		{[]string{"--dry-run", "--", "--"}, "--"},
	} {
		fs, _ := NewMain(io.Discard, io.Discard, nil).newFlagSet("ask", "ask")
		fs.Bool("dry-run", false, "")
		got, err := parseQuestion(fs, tc.args)
		if err != nil || got != tc.want {
			t.Errorf("parseQuestion(%q) = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

type fakeProvider struct {
	results []web.Result
	err     error
}

func (fakeProvider) Name() string { return "fake" }

func (f fakeProvider) Search(context.Context, string, int) ([]web.Result, error) {
	return f.results, f.err
}

func TestWebSearcherAdaptsProvider(t *testing.T) {
	w := webSearcher{fakeProvider{results: []web.Result{{Title: "T", URL: "https://example.org/", Snippet: "S"}}}}
	got, err := w.Search(context.Background(), "q", 3)
	if err != nil || len(got) != 1 || got[0] != (rag.WebResult{Title: "T", URL: "https://example.org/", Snippet: "S"}) {
		t.Fatalf("Search = %+v, %v", got, err)
	}
	failing := webSearcher{fakeProvider{err: errors.New("duckduckgo: status 503")}}
	if _, err := failing.Search(context.Background(), "q", 3); err == nil {
		t.Fatal("a provider error must reach the pipeline, which degrades to the vault")
	}
}
