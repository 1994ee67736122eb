package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// How often a draining backlog is shown: a line redrawn in place on a
// terminal at most every redrawEvery, else a plain line (or a log line,
// under serve and follow) every plainEvery. rateWindow is how far back the
// rate is measured.
const (
	redrawEvery = 250 * time.Millisecond
	plainEvery  = 10 * time.Second
	rateWindow  = time.Minute
)

// embedProgress is how far the embedder is through a backlog: done chunks
// embedded since it began to drain, waiting still to embed, at rate
// chunks/s (0 until measured).
type embedProgress struct {
	done, waiting int
	rate          float64
}

func (p embedProgress) total() int { return p.done + p.waiting }

// left is the time the waiting chunks take at the rate, when it is known.
func (p embedProgress) left() (time.Duration, bool) {
	if p.rate <= 0 {
		return 0, false
	}
	return time.Duration(float64(p.waiting) / p.rate * float64(time.Second)).Round(time.Second), true
}

var printer = message.NewPrinter(language.English)

// String is the progress in one line: "embedding: 1,234 of 17,871 chunks
// (6.9%), 29.5 chunks/s, 9m24s left".
func (p embedProgress) String() string {
	s := printer.Sprintf("embedding: %d of %d chunks (%.1f%%)", p.done, p.total(), 100*float64(p.done)/float64(max(p.total(), 1)))
	if left, ok := p.left(); ok {
		s += fmt.Sprintf(", %.1f chunks/s, %v left", p.rate, left)
	}
	return s
}

// rateMeter measures a count's rate over the last rateWindow from samples
// of it.
type rateMeter struct {
	samples []rateSample
}

type rateSample struct {
	at    time.Time
	count int
}

// add records count at at and returns the rate per second since the
// oldest sample within rateWindow (the one just before it, so the window
// is never empty), 0 while there is only one.
func (m *rateMeter) add(at time.Time, count int) float64 {
	m.samples = append(m.samples, rateSample{at, count})
	drop := 0
	for drop+1 < len(m.samples) && at.Sub(m.samples[drop+1].at) >= rateWindow {
		drop++
	}
	m.samples = m.samples[drop:]
	first := m.samples[0]
	if d := at.Sub(first.at); d > 0 {
		return float64(count-first.count) / d.Seconds()
	}
	return 0
}

// progressLine shows a draining backlog on w: redrawn in place on a
// terminal, a plain line every plainEvery otherwise, so that a log file
// gets a line every ten seconds and not a line per batch.
type progressLine struct {
	w        io.Writer
	terminal bool
	last     time.Time // when a line was last written, or the drain began
	drawn    bool      // a terminal line is on screen, not yet ended
}

// newProgressLine starts showing progress on w at start; w is a terminal
// when it is one (a file whose descriptor is a terminal).
func newProgressLine(w io.Writer, start time.Time) *progressLine {
	f, ok := w.(*os.File)
	return &progressLine{w: w, terminal: ok && term.IsTerminal(int(f.Fd())), last: start}
}

// due reports whether a line would be shown at now: the caller then reads
// what it needs for it.
func (l *progressLine) due(now time.Time) bool {
	if l.terminal {
		return !l.drawn || now.Sub(l.last) >= redrawEvery
	}
	return now.Sub(l.last) >= plainEvery
}

// show writes p, when due at now.
func (l *progressLine) show(now time.Time, p embedProgress) {
	if !l.due(now) {
		return
	}
	l.last = now
	if l.terminal {
		fmt.Fprintf(l.w, "\r%s\x1b[K", p)
		l.drawn = true
		return
	}
	fmt.Fprintln(l.w, p)
}

// end clears a terminal line, so the next output starts on a clean line.
func (l *progressLine) end() {
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
}

// backlogLog logs a backlog draining in the background (serve, follow)
// every plainEvery, as `vaultask index` prints it, and once more when it
// is caught up, if it logged the drain at all: an edit embedded at once
// logs nothing. It keeps the rate for /status. Its batch and caughtUp are
// the vectorizer's OnBatch and OnCaughtUp.
type backlogLog struct {
	log     *slog.Logger
	now     func() time.Time
	waiting func(context.Context) (int, error) // the chunks still to embed

	mu     sync.Mutex
	meter  rateMeter
	done   int
	start  time.Time // when the drain's first batch was stored
	last   time.Time // when it was last logged, or began
	logged bool
	rate   float64
}

func (b *backlogLog) batch(ctx context.Context, n, _ int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.done == 0 {
		b.start, b.last = now, now
	}
	b.done += n
	b.rate = b.meter.add(now, b.done)
	if now.Sub(b.last) < plainEvery {
		return
	}
	waiting, err := b.waiting(ctx)
	if err != nil {
		b.log.Warn("counting the embedding backlog", keyErr, err)
		return
	}
	b.last, b.logged = now, true
	p := embedProgress{done: b.done, waiting: waiting, rate: b.rate}
	attrs := []any{keyEmbedded, p.done, keyOf, p.total(), keyRate, fmt.Sprintf("%.1f chunks/s", p.rate)}
	if left, ok := p.left(); ok {
		attrs = append(attrs, keyLeft, left)
	}
	b.log.Info("embedding the backlog", attrs...)
}

func (b *backlogLog) caughtUp() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.logged {
		b.log.Info("embedding caught up", keyEmbedded, b.done, keyTook, b.now().Sub(b.start).Round(time.Second))
	}
	b.meter, b.done, b.logged, b.rate = rateMeter{}, 0, false, 0
}

// chunksPerSecond is the rate of the drain under way, 0 when none is.
func (b *backlogLog) chunksPerSecond() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rate
}
