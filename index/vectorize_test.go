package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/internal/retry"
	"github.com/vaultask/vaultask/vault"
)

// hostEmbedder is a deterministic embedder whose host can be taken down.
type hostEmbedder struct {
	down  atomic.Bool
	calls atomic.Int32
}

func (h *hostEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	h.calls.Add(1)
	if h.down.Load() {
		return nil, errors.New("dial tcp 127.0.0.1:11434: connection refused")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1, float32(strings.Count(t, "e")), 0}
	}
	return out, nil
}

func manyNotes(n int) []vault.NoteInput {
	var notes []vault.NoteInput
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("## A\n\n%s\n\n## B\n\n%s\n", filler(i, 1), filler(i, 2))
		notes = append(notes, note(fmt.Sprintf("n%03d.md", i), body))
	}
	return notes
}

func TestVectorizerDrainsBacklogWholeNotes(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(manyNotes(20)...))
	ctx := context.Background()

	// A reader running alongside must never see a note half embedded.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var torn atomic.Int32
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var n int
			if err := s.reader.QueryRow(`SELECT count(*) FROM (SELECT doc_id FROM chunks GROUP BY doc_id HAVING sum(embedded) NOT IN (0, count(*)))`).Scan(&n); err != nil {
				t.Error(err)
				return
			}
			if n > 0 {
				torn.Add(1)
			}
		}
	}()
	v := NewVectorizer(s, &hostEmbedder{}, VectorizerOptions{BatchChunks: 6})
	n, err := v.Drain(ctx)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Stats(ctx)
	if n != st.Chunks || st.Vectors != st.Chunks || st.EmbeddingBacklog != 0 {
		t.Fatalf("drained %d; stats %+v", n, st)
	}
	if torn.Load() > 0 {
		t.Fatalf("a reader saw %d half-embedded snapshots", torn.Load())
	}
	// Searching with a stored vector finds its own chunk first.
	hits, err := s.SearchVector(ctx, []float32{float32(len(embedText("n000\nn000.md\nA", ""))), 1, 0, 0}, 3, vault.ScopeAll)
	if err != nil || len(hits) != 3 {
		t.Fatalf("vector search after drain: %v %v", hits, err)
	}
}

func TestVectorizerDegradesAndRecovers(t *testing.T) {
	s := mustOpen(t, Options{})
	emb := &hostEmbedder{}
	emb.down.Store(true)
	ticks := make(chan time.Time)
	v := NewVectorizer(s, emb, VectorizerOptions{Clock: tickClock{retry.System, ticks}})
	ctx := context.Background()
	if err := v.Open(ctx); err != nil {
		t.Fatal(err)
	}

	mustApply(t, s, upserts(note("a.md", "kiwi orchard notes")))
	waitFor(t, func() bool { return !v.Status().Available })
	if st := v.Status(); !strings.Contains(st.LastError, "connection refused") {
		t.Fatalf("status while down: %+v", st)
	}
	// FTS works without vectors.
	hits, err := s.SearchFTS(ctx, "kiwi", 5, vault.ScopeAll, vault.FieldWeights{})
	if err != nil || len(hits) != 1 {
		t.Fatalf("FTS while the embedder is down: %v %v", hits, err)
	}
	emb.down.Store(false)
	ticks <- time.Now() // the backoff elapses
	// The vectors land before the vectorizer counts them and marks itself
	// recovered: wait for all three.
	waitFor(t, func() bool {
		st, _ := s.Stats(ctx)
		return st.EmbeddingBacklog == 0 && v.Status().Embedded == 1 && v.Status().Available
	})
	if st := v.Status(); !st.Available || st.LastError != "" || st.Embedded != 1 {
		t.Fatalf("status after recovery: %+v", st)
	}
	// A new note wakes it through the store's signal, without a tick.
	mustApply(t, s, upserts(note("b.md", "pear")))
	waitFor(t, func() bool { st, _ := s.Stats(ctx); return st.Vectors == 2 })
	if err := v.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLateVectorForRewrittenChunkIsDropped(t *testing.T) {
	s := mustOpen(t, Options{})
	ctx := context.Background()
	mustApply(t, s, upserts(note("a.md", "first text")))
	pending, err := s.Backlog(ctx, 64, 64)
	if err != nil || len(pending) != 1 {
		t.Fatal(pending, err)
	}
	n := note("a.md", "second text")
	n.Rev = "2-x"
	mustApply(t, s, upserts(n))
	written, err := s.PutVectors(ctx, []Vector{{RowID: pending[0].RowID, Text: pending[0].Text, Embedding: []float32{1, 0, 0, 0}}})
	if err != nil || written != 0 {
		t.Fatalf("late vector: written=%d err=%v, want it dropped", written, err)
	}
	if st, _ := s.Stats(ctx); st.Vectors != 0 || st.EmbeddingBacklog != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// recordingEmbedder remembers how many texts each call held.
type recordingEmbedder struct {
	hostEmbedder
	mu    sync.Mutex
	sizes []int
}

func (r *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.sizes = append(r.sizes, len(texts))
	r.mu.Unlock()
	return r.hostEmbedder.Embed(ctx, texts)
}

// A large note is embedded in slices with the notes behind it served in
// between: a small note written after it has its vector after one step,
// not after the whole large note. The large note's vectors stay out of
// search until its last slice, so it is never half embedded.
func TestLargeNoteDoesNotStarveSmallOnes(t *testing.T) {
	s := mustOpen(t, Options{Chunking: markdown.ChunkOptions{TargetTokens: 60, MinTokens: 20, MaxTokens: 80}})
	ctx := context.Background()
	var big strings.Builder
	for i := range 60 {
		fmt.Fprintf(&big, "## Part %d\n\n%s\n\n", i, filler(i, 3))
	}
	mustApply(t, s, upserts(note("Big.md", big.String())))
	mustApply(t, s, upserts(note("Small.md", "a small note written after the big one")))
	bigChunks := count(t, s, `SELECT count(*) FROM chunks WHERE doc_id = 'big.md'`)
	if bigChunks < 40 {
		t.Fatalf("the big note has %d chunks, want at least 40", bigChunks)
	}
	emb := &recordingEmbedder{}
	v := NewVectorizer(s, emb, VectorizerOptions{BatchChunks: 16, SliceChunks: 8})
	if _, _, _, err := v.step(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count(t, s, `SELECT count(*) FROM chunks WHERE doc_id = 'small.md' AND embedded = 1`); got != 1 {
		t.Fatalf("after one step the small note has %d vectors, want 1", got)
	}
	visible := `SELECT count(*) FROM chunks_vec v JOIN chunks c ON c.rowid = v.rowid WHERE c.doc_id = 'big.md'`
	if got := count(t, s, visible); got != 0 {
		t.Fatalf("%d vectors of the half-embedded big note are searchable", got)
	}
	for {
		n, _, empty, err := v.step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if empty {
			break
		}
		if done := count(t, s, `SELECT count(*) FROM chunks WHERE doc_id = 'big.md' AND embedded = 0`); n > 0 && done > 0 && count(t, s, visible) != 0 {
			t.Fatal("the big note became searchable before its last slice")
		}
	}
	if got := count(t, s, visible); got != bigChunks {
		t.Fatalf("after draining, %d of the big note's %d vectors are searchable", got, bigChunks)
	}
	for i, n := range emb.sizes {
		if n > 16 {
			t.Errorf("embed call %d held %d texts, want at most 16", i, n)
		}
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

// A database error while PutVectors reads a chunk is an error, not a chunk
// that changed meanwhile (whose vector is dropped without a word).
func TestPutVectorsReportsDatabaseErrors(t *testing.T) {
	s := mustOpen(t, Options{})
	ctx := context.Background()
	mustApply(t, s, upserts(note("a.md", "some text")))
	pending, err := s.Backlog(ctx, 64, 64)
	if err != nil || len(pending) != 1 {
		t.Fatal(pending, err)
	}
	if _, err := s.writer.Exec(`ALTER TABLE chunks RENAME COLUMN body TO body_gone`); err != nil {
		t.Fatal(err)
	}
	n, err := s.PutVectors(ctx, []Vector{{RowID: pending[0].RowID, Text: pending[0].Text, Embedding: []float32{1, 0, 0, 0}}})
	if err == nil || !strings.Contains(err.Error(), "body") {
		t.Fatalf("PutVectors on a broken table = %d, %v; want the database's error", n, err)
	}
}

// bigNote is a note of about size bytes, cut into many chunks.
func bigNote(path string, size int) vault.NoteInput {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "## Part %d\n\n%s\n\n", i, filler(i, 3))
	}
	return note(path, b.String())
}

func embeddedCount(tb testing.TB, s *Store, docID string) int {
	tb.Helper()
	return count(tb, s, `SELECT count(*) FROM chunks WHERE doc_id = ? AND embedded = 1`, docID)
}

// Batches are filled a slice per waiting note in turn, the notes that have
// had fewest turns first: small notes written after three large ones get
// their vectors in the second batch, not after the large notes (the first
// batch went to the two oldest), and a note written later still is served
// in the very next batch, ahead of the large notes' further turns.
func TestSmallNotesWaitAboutOneBatchBehindLargeOnes(t *testing.T) {
	s := mustOpen(t, Options{Chunking: markdown.ChunkOptions{TargetTokens: 60, MinTokens: 20, MaxTokens: 80}})
	ctx := context.Background()
	mustApply(t, s, upserts(bigNote("A.md", 20_000)))
	mustApply(t, s, upserts(bigNote("B.md", 20_000)))
	mustApply(t, s, upserts(bigNote("C.md", 60_000)))
	small := []string{"s1.md", "s2.md", "s3.md", "s4.md"}
	for _, p := range small {
		mustApply(t, s, upserts(note(p, "a small note "+p)))
	}
	for _, id := range []string{"a.md", "b.md", "c.md"} {
		if n := count(t, s, `SELECT count(*) FROM chunks WHERE doc_id = ?`, id); n < 3*8 {
			t.Fatalf("%s has %d chunks, want at least three slices", id, n)
		}
	}
	v := NewVectorizer(s, &hostEmbedder{}, VectorizerOptions{BatchChunks: 16, SliceChunks: 8})
	for range 2 {
		if _, _, _, err := v.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range small {
		if got := embeddedCount(t, s, p); got != 1 {
			t.Errorf("after two batches %s has %d vectors, want 1", p, got)
		}
	}
	mustApply(t, s, upserts(note("late.md", "a small note written while the large ones wait")))
	if _, _, _, err := v.step(ctx); err != nil {
		t.Fatal(err)
	}
	if got := embeddedCount(t, s, "late.md"); got != 1 {
		t.Errorf("the batch after late.md was written left it with %d vectors, want 1", got)
	}
	if _, err := v.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Stats(ctx); st.Vectors != st.Chunks || st.EmbeddingBacklog != 0 {
		t.Fatalf("after draining: %+v", st)
	}
}

// BenchmarkSmallNotesBehindLargeNotes is how many batches of the default
// size pass, and how many chunks are embedded, before four small notes
// written after two 1 MB notes and a 5 MB note have their vectors. The
// embedder is the deterministic test one, so the time per op is the
// backlog's own cost; multiply the batches by the real embedder's time per
// batch for the wait a user sees.
//
//	go test -tags sqlite_fts5 -run '^$' -bench SmallNotesBehindLargeNotes -benchtime 1x ./index/
func BenchmarkSmallNotesBehindLargeNotes(b *testing.B) {
	ctx := context.Background()
	small := []string{"s1.md", "s2.md", "s3.md", "s4.md"}
	for range b.N {
		b.StopTimer()
		s := mustOpen(b, Options{})
		mustApply(b, s, upserts(bigNote("A.md", 1<<20)))
		mustApply(b, s, upserts(bigNote("B.md", 1<<20)))
		mustApply(b, s, upserts(bigNote("C.md", 5<<20)))
		for _, p := range small {
			mustApply(b, s, upserts(note(p, "a small note "+p)))
		}
		large := count(b, s, `SELECT count(*) FROM chunks`) - len(small)
		v := NewVectorizer(s, &hostEmbedder{}, VectorizerOptions{})
		b.StartTimer()
		batches, embedded := 0, 0
		for count(b, s, `SELECT count(*) FROM chunks WHERE doc_id LIKE 's_.md' AND embedded = 1`) < len(small) {
			n, _, empty, err := v.step(ctx)
			if err != nil || empty {
				b.Fatalf("step: empty=%v err=%v", empty, err)
			}
			batches++
			embedded += n
		}
		b.ReportMetric(float64(batches), "batches")
		b.ReportMetric(float64(embedded-len(small)), "large-chunks-first")
		b.ReportMetric(float64(large), "large-chunks")
		b.StopTimer()
		s.Close()
	}
}
