package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vaultask/vaultask/index"
)

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

func TestEmbedProgressString(t *testing.T) {
	for _, tc := range []struct {
		p    embedProgress
		want string
	}{
		{embedProgress{done: 1234, waiting: 16637, rate: 29.5}, "embedding: 1,234 of 17,871 chunks (6.9%), 29.5 chunks/s, 9m24s left"},
		{embedProgress{done: 0, waiting: 40}, "embedding: 0 of 40 chunks (0.0%)"},
		{embedProgress{done: 40, waiting: 0, rate: 3}, "embedding: 40 of 40 chunks (100.0%), 3.0 chunks/s, 0s left"},
		{embedProgress{}, "embedding: 0 of 0 chunks (0.0%)"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}

// The rate is measured over the last minute: an early burst stops counting
// once it is a minute old.
func TestRateMeter(t *testing.T) {
	var m rateMeter
	if r := m.add(t0, 0); r != 0 {
		t.Fatalf("one sample: rate %v, want 0", r)
	}
	if r := m.add(t0.Add(10*time.Second), 300); r != 30 {
		t.Fatalf("300 in 10 s: rate %v, want 30", r)
	}
	m.add(t0.Add(70*time.Second), 360)
	if r := m.add(t0.Add(80*time.Second), 370); r != 1 {
		t.Fatalf("after the burst, 70 in the last 70 s: rate %v, want 1", r)
	}
}

// On a terminal the line is redrawn in place (carriage return, the line,
// clear to its end) at most every redrawEvery, and cleared at the end.
func TestProgressLineOnATerminal(t *testing.T) {
	var out bytes.Buffer
	l := &progressLine{w: &out, terminal: true, last: t0}
	l.show(t0.Add(time.Second), embedProgress{done: 10, waiting: 90, rate: 10})
	l.show(t0.Add(time.Second+100*time.Millisecond), embedProgress{done: 11, waiting: 89, rate: 10}) // too soon
	l.show(t0.Add(2*time.Second), embedProgress{done: 20, waiting: 80, rate: 10})
	l.end()
	l.end() // nothing on screen: nothing to clear
	want := "\rembedding: 10 of 100 chunks (10.0%), 10.0 chunks/s, 9s left\x1b[K" +
		"\rembedding: 20 of 100 chunks (20.0%), 10.0 chunks/s, 8s left\x1b[K" +
		"\r\x1b[K"
	if got := out.String(); got != want {
		t.Errorf("terminal output:\n%q\nwant\n%q", got, want)
	}
}

// Elsewhere (a pipe, a log file) a plain line every plainEvery, the first
// plainEvery after the drain began, and nothing to clear at the end.
func TestProgressLineElsewhere(t *testing.T) {
	var out bytes.Buffer
	l := newProgressLine(&out, t0)
	if l.terminal {
		t.Fatal("a buffer taken for a terminal")
	}
	for s := 1; s <= 25; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		if l.due(at) {
			l.show(at, embedProgress{done: s * 10, waiting: 500 - s*10, rate: 10})
		}
	}
	l.end()
	want := "embedding: 100 of 500 chunks (20.0%), 10.0 chunks/s, 40s left\n" +
		"embedding: 200 of 500 chunks (40.0%), 10.0 chunks/s, 30s left\n"
	if got := out.String(); got != want {
		t.Errorf("plain output:\n%q\nwant\n%q", got, want)
	}
}

// A file that is not a terminal (stdout redirected) gets plain lines.
func TestProgressLineOnAFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if newProgressLine(f, t0).terminal {
		t.Error("a regular file taken for a terminal")
	}
}

// stepClock is a clock that moves on by step each time it is read.
type stepClock struct {
	mu   sync.Mutex
	at   time.Time
	step time.Duration
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(c.step)
	return c.at
}

// serve and follow log a long drain every plainEvery, as index prints it,
// and once more when caught up; a drain shorter than that logs nothing.
func TestBacklogLog(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	clock := &stepClock{at: t0, step: 4 * time.Second}
	waiting := 100
	b := &backlogLog{log: log, now: clock.now, waiting: func(context.Context) (int, error) { return waiting, nil }}
	ctx := context.Background()
	b.batch(ctx, 5, 0) // at 4 s: the drain begins
	b.batch(ctx, 5, 0) // 8 s
	b.caughtUp()
	if logs.Len() != 0 {
		t.Fatalf("a drain of 4 s logged:\n%s", logs.String())
	}
	for i := range 7 { // at 12, 16, … 36 s
		waiting -= 10
		b.batch(ctx, 10, 0)
		if got := b.chunksPerSecond(); i > 0 && got != 2.5 {
			t.Fatalf("rate %v, want 2.5 (10 chunks every 4 s)", got)
		}
	}
	b.caughtUp()
	if b.chunksPerSecond() != 0 {
		t.Error("a rate after the drain")
	}
	want := `level=INFO msg="embedding the backlog" embedded=40 of=100 rate="2.5 chunks/s" left=24s
level=INFO msg="embedding the backlog" embedded=70 of=100 rate="2.5 chunks/s" left=12s
level=INFO msg="embedding caught up" embedded=70 took=28s
`
	if diff := cmp.Diff(want, logs.String()); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

var progressLineRE = regexp.MustCompile(`^embedding: (\d+) of (\d+) chunks \(\d+\.\d%\)(, \d+\.\d chunks/s, \S+ left)?$`)

// `vaultask index` prints the embedding's progress, here plain lines (its
// stdout is not a terminal) with its clock ten seconds on at each look,
// then its total: before, nothing between the notes' count and the total
// (17 minutes on the hub with bge).
func TestIndexShowsEmbeddingProgress(t *testing.T) {
	files := map[string]string{}
	for i := range 120 {
		files["n"+strconv.Itoa(i)+".md"] = "# Note " + strconv.Itoa(i) + "\n\n" + strings.Repeat("The kettle sings on the stove while the bread rises. ", 20) + "\n"
	}
	vault := writeVault(t, files)
	env := []string{"VAULTASK_INDEX__PATH=" + filepath.Join(t.TempDir(), "i.db"), "VAULTASK_MODELS__EMBEDDING=builtin/use-lite",
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json"}
	var stdout, stderr bytes.Buffer
	m := NewMain(&stdout, &stderr, env)
	m.now = (&stepClock{at: t0, step: 11 * time.Second}).now
	if err := m.Run(context.Background(), []string{"index", "--from-dir", vault}); err != nil {
		t.Fatalf("index: %v\n%s", err, stderr.String())
	}
	var lines []string
	for line := range strings.SplitSeq(stdout.String(), "\n") {
		if strings.HasPrefix(line, "embedding: ") {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 || !strings.Contains(stdout.String(), "embedded 120 chunks") {
		t.Fatalf("no progress lines, or not 120 chunks embedded:\n%s", stdout.String())
	}
	last := 0
	for _, line := range lines {
		mt := progressLineRE.FindStringSubmatch(line)
		if mt == nil {
			t.Fatalf("progress line %q is not embedding: N of M chunks (P%%), R chunks/s, T left", line)
		}
		done, _ := strconv.Atoi(mt[1])
		total, _ := strconv.Atoi(mt[2])
		if done <= last || total != 120 {
			t.Errorf("progress line %q after %d done, want more done of 120", line, last)
		}
		last = done
	}
}

// `vaultask stats` counts the chunks of the backlog already embedded, held
// until the rest of their notes are.
func TestBacklogText(t *testing.T) {
	if got := backlogText(index.Stats{EmbeddingBacklog: 3}); got != "3" {
		t.Errorf("backlog of 3, none staged: %q", got)
	}
	want := "1455 (1000 of them embedded, searchable once the rest of their notes are)"
	if got := backlogText(index.Stats{EmbeddingBacklog: 1455, EmbeddingStaged: 1000}); got != want {
		t.Errorf("backlog of 1455, 1000 staged: %q, want %q", got, want)
	}
}
