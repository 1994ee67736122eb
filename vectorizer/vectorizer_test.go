package vectorizer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/internal/retry"
	"github.com/vaultask/vaultask/vault"
)

// hostEmbedder is a deterministic embedder whose host can be taken down,
// and which remembers how many texts each call held.
type hostEmbedder struct {
	down  atomic.Bool
	mu    sync.Mutex
	sizes []int
}

func (h *hostEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	h.mu.Lock()
	h.sizes = append(h.sizes, len(texts))
	h.mu.Unlock()
	if h.down.Load() {
		return nil, errors.New("dial tcp 127.0.0.1:11434: connection refused")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1, float32(strings.Count(t, "e")), 0}
	}
	return out, nil
}

func mustStore(t *testing.T) *index.Store {
	t.Helper()
	s, err := index.Open(context.Background(), index.Options{Path: filepath.Join(t.TempDir(), "index.db"),
		Space: vault.EmbeddingSpace{Model: "test/fixed", Dim: 4}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func mustApply(t *testing.T, s *index.Store, notes ...vault.NoteInput) {
	t.Helper()
	if _, err := s.Feed().Apply(context.Background(), index.Batch{Upserts: notes}); err != nil {
		t.Fatal(err)
	}
}

func note(path, text string) vault.NoteInput {
	return vault.NoteInput{Path: path, Rev: "1-a", Text: text, MTime: time.Unix(1700000000, 0)}
}

// notes are n notes of two sections each.
func notes(n int) []vault.NoteInput {
	var out []vault.NoteInput
	for i := range n {
		out = append(out, note(fmt.Sprintf("n%03d.md", i), fmt.Sprintf("## A\n\nalpha %d\n\n## B\n\nbeta %d\n", i, i)))
	}
	return out
}

func mustStats(t *testing.T, s *index.Store) index.Stats {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Drain embeds the whole backlog in calls of at most BatchChunks texts and
// says how many chunks it embedded.
func TestDrain(t *testing.T) {
	s := mustStore(t)
	mustApply(t, s, notes(20)...)
	emb := &hostEmbedder{}
	n, err := New(s.Vectors(), emb, Options{BatchChunks: 6, Logger: quiet()}).Drain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st := mustStats(t, s); n != st.Chunks || st.Vectors != st.Chunks || st.EmbeddingBacklog != 0 || n == 0 {
		t.Fatalf("drained %d; stats %+v", n, st)
	}
	for i, size := range emb.sizes {
		if size > 6 {
			t.Errorf("embed call %d held %d texts, want at most 6", i, size)
		}
	}
}

// An embedder that answers with the wrong number of vectors is an error,
// and nothing is written.
func TestDrainRefusesShortAnswers(t *testing.T) {
	s := mustStore(t)
	mustApply(t, s, notes(2)...)
	short := embedFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		return [][]float32{{1, 0, 0, 0}}, nil
	})
	want := fmt.Sprintf("1 vectors for %d texts", mustStats(t, s).Chunks)
	if _, err := New(s.Vectors(), short, Options{Logger: quiet()}).Drain(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Drain with a short answer: %v", err)
	}
	if st := mustStats(t, s); st.Vectors != 0 {
		t.Fatalf("%d vectors written", st.Vectors)
	}
}

type embedFunc func(ctx context.Context, texts []string) ([][]float32, error)

func (f embedFunc) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}

func TestVectorizerDegradesAndRecovers(t *testing.T) {
	s := mustStore(t)
	emb := &hostEmbedder{}
	emb.down.Store(true)
	ticks := make(chan time.Time)
	v := New(s.Vectors(), emb, Options{Clock: tickClock{retry.System, ticks}, Logger: quiet()})
	ctx := context.Background()
	if err := v.Open(ctx); err != nil {
		t.Fatal(err)
	}

	mustApply(t, s, note("a.md", "kiwi orchard notes"))
	waitFor(t, func() bool { return !v.Status().Available })
	if st := v.Status(); !strings.Contains(st.LastError, "connection refused") {
		t.Fatalf("status while down: %+v", st)
	}
	// FTS works without vectors.
	hits, err := s.Search().SearchFTS(ctx, "kiwi", 5, vault.ScopeAll, vault.FieldWeights{})
	if err != nil || len(hits) != 1 {
		t.Fatalf("FTS while the embedder is down: %v %v", hits, err)
	}
	emb.down.Store(false)
	ticks <- time.Now() // the backoff elapses
	// The vectors land before the vectorizer counts them and marks itself
	// recovered: wait for all three.
	waitFor(t, func() bool {
		return mustStats(t, s).EmbeddingBacklog == 0 && v.Status().Embedded == 1 && v.Status().Available
	})
	if st := v.Status(); !st.Available || st.LastError != "" || st.Embedded != 1 {
		t.Fatalf("status after recovery: %+v", st)
	}
	// A new note wakes it through the store's signal, without a tick.
	mustApply(t, s, note("b.md", "pear"))
	waitFor(t, func() bool { return mustStats(t, s).Vectors == 2 })
	if err := v.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, cond func() bool) { waitWithin(t, 10*time.Second, cond) }

// waitWithin is waitFor with its own limit, for a real model on threads of
// the lowest priority on a busy machine.
func waitWithin(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached in %v", limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// tickClock is the system clock whose timers fire when the test sends on
// ticks.
type tickClock struct {
	retry.Clock
	ticks chan time.Time
}

func (c tickClock) NewTimer(time.Duration) retry.Timer { return tickTimer{c.ticks} }

type tickTimer struct{ c chan time.Time }

func (t tickTimer) C() <-chan time.Time    { return t.c }
func (tickTimer) Stop() bool               { return true }
func (tickTimer) Reset(time.Duration) bool { return true }

// stepClock is a clock that stands still but for what advance adds; its
// timers are the system's.
type stepClock struct {
	retry.Clock
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Batches are cut to BatchTime at the embedder's measured rate: the first
// to the rate of the slowest built-in model, the next ones to what the
// embedder did, each at least one chunk. The embedder here takes 1 ms per
// 100 bytes (100 KB/s) on the test's clock.
func TestBatchesAreCutToTheirTime(t *testing.T) {
	s := mustStore(t)
	var notes []vault.NoteInput
	for i := range 40 {
		notes = append(notes, note(fmt.Sprintf("n%02d.md", i), strings.Repeat(fmt.Sprintf("word%d ", i), 150)))
	}
	mustApply(t, s, notes...)
	clock := &stepClock{Clock: retry.System, now: time.Unix(1700000000, 0)}
	var bytes, sizes []int
	emb := embedFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		sizes = append(sizes, len(texts))
		n := 0
		out := make([][]float32, len(texts))
		for i, t := range texts {
			n += len(t)
			out[i] = []float32{float32(len(t)), 1, 0, 0}
		}
		bytes = append(bytes, n)
		clock.advance(time.Duration(n) * time.Millisecond / 100)
		return out, nil
	})
	const batchTime = 50 * time.Millisecond
	v := New(s.Vectors(), emb, Options{BatchTime: batchTime, Clock: clock, Logger: quiet()})
	if n, err := v.Drain(context.Background()); err != nil || n != 40 {
		t.Fatalf("Drain = %d, %v; want the 40 chunks", n, err)
	}
	// The first batch is cut to 16 KB/s for 50 ms, 819 bytes: one chunk
	// of about 1 KB.
	if len(sizes) < 3 || sizes[0] != 1 {
		t.Fatalf("batches of %v chunks (%v bytes), want the first of one chunk", sizes, bytes)
	}
	for i, b := range bytes[1 : len(bytes)-1] {
		// 100 KB/s for 50 ms is 5,000 bytes: four or five chunks.
		if b > 5000 || b < 5000-1100 {
			t.Errorf("batch %d held %d bytes, want up to the 5,000 the embedder gets through in %v", i+1, b, batchTime)
		}
	}
}
