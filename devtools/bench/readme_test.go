package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The README's targets table and reports/BENCHMARKS.md are what
// reports/bench/results.json says: a run that rewrote the report without
// the README (or the other way round) fails here. `go run -tags
// sqlite_fts5 ./devtools/cmd/bench -readme README.md` writes the README's.
func TestReportsMatchResults(t *testing.T) {
	rep, err := ReadReport(filepath.Join("..", "..", "reports"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := RewriteREADME(readme, rep)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readme, want) {
		t.Errorf("README.md's targets table differs from reports/bench/results.json's; run go run -tags sqlite_fts5 ./devtools/cmd/bench -readme README.md:\n%s",
			firstDifference(string(readme), string(want)))
	}
	md, err := os.ReadFile(filepath.Join("..", "..", "reports", "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.writeMarkdown(&b)
	if b.String() != string(md) {
		t.Errorf("reports/BENCHMARKS.md differs from what reports/bench/results.json writes:\n%s", firstDifference(string(md), b.String()))
	}
}

// firstDifference names the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n  have %s\n  want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("line %d: one ends there", min(len(g), len(w))+1)
}

// RewriteREADME writes only between its markers, names each section's
// commit and marks one measured on a tree with changes, is idempotent, and
// refuses a README without its markers.
func TestRewriteREADME(t *testing.T) {
	ok := true
	rep := &Report{Sections: []*Section{
		{ID: "1", Commit: "aaaaaaaaaaaa-dirty", Rows: []*Row{{Name: "fresh", Unit: "ms", Summary: Summary{N: 3, Median: 5}, Target: "< 9 ms", Met: &ok}}},
		{ID: "2", Commit: "bbbbbbbbbbbb", Rows: []*Row{{Name: "untargeted", Unit: "s"}}},
		{ID: "3", Commit: "aaaaaaaaaaaa-dirty"},
		{ID: "4", Skipped: "no model"},
	}}
	readme := "# Title\n\nBefore.\n\n" + readmeBegin + "\nold table\n" + readmeEnd + "\n\nAfter.\n"
	got, err := RewriteREADME([]byte(readme), rep)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\nBefore.\n\n" + readmeBegin + "\n" +
		"Sections 1, 3 at `aaaaaaa` (with uncommitted changes); 2 at `bbbbbbb`, as [reports/BENCHMARKS.md](reports/BENCHMARKS.md) records them:\n\n" +
		"| section | figure | target | n | median / p50 | p99 | baseline median | ratio | |\n" +
		"|---|---|---|---:|---:|---:|---:|---:|---|\n" +
		"| 1 | fresh | < 9 ms | 3 | 5 ms |  |  |  | met |\n\n" +
		readmeEnd + "\n\nAfter.\n"
	if string(got) != want {
		t.Errorf("RewriteREADME:\n%s\nwant:\n%s", got, want)
	}
	if again, err := RewriteREADME(got, rep); err != nil || !bytes.Equal(again, got) {
		t.Errorf("rewriting again changed it: %v\n%s", err, again)
	}
	for _, broken := range []string{"# No markers\n", readmeEnd + "\n" + readmeBegin + "\n", readmeBegin + "\nno end\n"} {
		if _, err := RewriteREADME([]byte(broken), rep); err == nil {
			t.Errorf("RewriteREADME(%q): no error", broken)
		}
	}
}

// With Clean, Run refuses a work tree whose tracked files have changes,
// before it builds or measures anything, naming the flag that allows it.
func TestRunRefusesADirtyTree(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "f.txt")
	git("commit", "-q", "-m", "one")
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Run(ctx, Config{Size: "smoke", Out: out, Root: root, Cache: t.TempDir(), Models: []string{"use-lite"}, Clean: true})
	if !errors.Is(err, ErrDirtyTree) || !strings.Contains(err.Error(), "-dirty") {
		t.Fatalf("Run on a dirty tree with Clean: %v, want ErrDirtyTree naming -dirty", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("Run wrote %d files before refusing", len(entries))
	}
}
