package bench

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// desc is n, n-1, … 1: summarize must sort.
func desc(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(n - i)
	}
	return xs
}

func TestSummarize(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one", []float64{7}, Summary{N: 1, Min: 7, Median: 7, P95: 7, P99: 7, Max: 7}},
		{"two: the median is their mean", []float64{3, 1}, Summary{N: 2, Min: 1, Median: 2, P95: 3, P99: 3, Max: 3}},
		{"odd", []float64{5, 1, 3}, Summary{N: 3, Min: 1, Median: 3, P95: 5, P99: 5, Max: 5}},
		{"20: p95 is the 19th", desc(20), Summary{N: 20, Min: 1, Median: 10.5, P95: 19, P99: 20, Max: 20}},
		{"99: p99 is the max", desc(99), Summary{N: 99, Min: 1, Median: 50, P95: 95, P99: 99, Max: 99}},
		{"100: p99 is the 99th", desc(100), Summary{N: 100, Min: 1, Median: 50.5, P95: 95, P99: 99, Max: 100}},
		{"200", desc(200), Summary{N: 200, Min: 1, Median: 100.5, P95: 190, P99: 198, Max: 200}},
	} {
		if got := summarize(c.xs); got != c.want {
			t.Errorf("%s: summarize = %+v, want %+v", c.name, got, c.want)
		}
	}
	xs := []float64{3, 1, 2}
	summarize(xs)
	if xs[0] != 3 || xs[1] != 1 {
		t.Errorf("summarize sorted its argument: %v", xs)
	}
}

func TestQuantileText(t *testing.T) {
	for _, c := range []struct {
		p    float64
		n    int
		want string
	}{
		{0.99, 1, "5 (= max, n<100)"},
		{0.99, 99, "5 (= max, n<100)"},
		{0.99, 100, "5"},
		{0.95, 19, "5 (= max, n<20)"},
		{0.95, 20, "5"},
	} {
		if got := quantileText(5, c.p, c.n); got != c.want {
			t.Errorf("quantileText(5, %v, %d) = %q, want %q", c.p, c.n, got, c.want)
		}
	}
}

// A table marks a p99 that is the max, and shows no spread for one value.
func TestWriteRows(t *testing.T) {
	var s Section
	s.dist("small", "ms", []float64{1, 2, 3})
	s.dist("large", "ms", desc(100))
	s.add("once", "MiB", []float64{4})
	var b bytes.Buffer
	writeRows(&b, s.Rows)
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[2], "| 3 (= max, n<100) |") || !strings.Contains(lines[2], "| 3 (= max, n<20) |") {
		t.Errorf("n=3 row does not mark its p95 and p99: %s", lines[2])
	}
	if strings.Contains(lines[3], "= max") || !strings.Contains(lines[3], "| 99.00 |") {
		t.Errorf("n=100 row: %s", lines[3])
	}
	if want := "| once | MiB | 1 |  | 4 |  |  |  |"; !strings.HasPrefix(lines[4], want) {
		t.Errorf("n=1 row = %s, want it to begin %s", lines[4], want)
	}
}

// A results.json that does not parse is replaced, not a reason to lose the
// run; one that does keeps the sections this run did not run.
func TestMergeInto(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bench"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bench", "results.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rep := &Report{Size: "smoke", Started: now, Seconds: 5, Sections: []*Section{{ID: "3", Started: now}}}
	rep.mergeInto(dir, quiet)
	if len(rep.Sections) != 1 {
		t.Fatalf("%d sections after merging a broken file, want 1", len(rep.Sections))
	}
	if err := rep.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	again := &Report{Size: "smoke", Started: now.Add(time.Hour), Seconds: 2, Sections: []*Section{{ID: "1", Started: now.Add(time.Hour)}}}
	again.mergeInto(dir, slog.New(slog.DiscardHandler))
	if len(again.Sections) != 2 || again.Sections[0].ID != "1" || again.Sections[1].ID != "3" {
		t.Fatalf("sections after merging: %+v", again.Sections)
	}
	if again.Seconds != 2 || !again.Started.Equal(now.Add(time.Hour)) {
		t.Errorf("took %v s, started %v: want the latest run's own", again.Seconds, again.Started)
	}
	var b bytes.Buffer
	again.writeMarkdown(&b)
	if !strings.Contains(b.String(), "| sections kept from earlier runs | 3 |") {
		t.Errorf("the header does not name the kept section:\n%s", b.String())
	}
}
