package index

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/vault"
)

// textVector is a deterministic 4-dimension vector of a chunk's text.
func textVector(text string) []float32 {
	return []float32{float32(len(text)), 1, float32(strings.Count(text, "e")), 0}
}

// embedStep embeds one batch of the backlog as the vectorizer does (batch
// chunks, slice of them per note a turn) and returns how many vectors the
// store took, and whether the backlog was empty.
func embedStep(tb testing.TB, s *Store, batch, slice int) (int, bool) {
	tb.Helper()
	ctx := context.Background()
	pending, err := s.Vectors().Backlog(ctx, batch, slice)
	if err != nil {
		tb.Fatal(err)
	}
	if len(pending) == 0 {
		return 0, true
	}
	vs := make([]Vector, len(pending))
	for i, p := range pending {
		vs[i] = Vector{RowID: p.RowID, Text: p.Text, Embedding: textVector(p.Text)}
	}
	n, err := s.Vectors().PutVectors(ctx, vs)
	if err != nil {
		tb.Fatal(err)
	}
	return n, false
}

func manyNotes(n int) []vault.NoteInput {
	var notes []vault.NoteInput
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("## A\n\n%s\n\n## B\n\n%s\n", filler(i, 1), filler(i, 2))
		notes = append(notes, note(fmt.Sprintf("n%03d.md", i), body))
	}
	return notes
}

// The backlog, drained in small batches, never shows a reader a note half
// embedded.
func TestBacklogPublishesWholeNotes(t *testing.T) {
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
	n := 0
	for {
		written, empty := embedStep(t, s, 6, 6)
		if empty {
			break
		}
		n += written
	}
	close(stop)
	wg.Wait()
	st, _ := s.Stats(ctx)
	if n != st.Chunks || st.Vectors != st.Chunks || st.EmbeddingBacklog != 0 {
		t.Fatalf("drained %d; stats %+v", n, st)
	}
	if torn.Load() > 0 {
		t.Fatalf("a reader saw %d half-embedded snapshots", torn.Load())
	}
	// Searching with a stored vector finds its own chunk first.
	hits, err := s.Search().SearchVector(ctx, s.queryOf([]float32{float32(len(embedText("n000\nn000.md\nA", ""))), 1, 0, 0}), 3, vault.ScopeAll)
	if err != nil || len(hits) != 3 {
		t.Fatalf("vector search after drain: %v %v", hits, err)
	}
}

// A large note is embedded in slices with the notes behind it served in
// between: a small note written after it has its vector after one step,
// not after the whole large note. The large note's vectors stay out of
// search until its last slice, so it is never half embedded.
func TestLargeNoteDoesNotStarveSmallOnes(t *testing.T) {
	s := mustOpen(t, Options{Chunking: markdown.ChunkOptions{TargetTokens: 60, MinTokens: 20, MaxTokens: 80}})
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
	embedStep(t, s, 16, 8)
	if got := count(t, s, `SELECT count(*) FROM chunks WHERE doc_id = 'small.md' AND embedded = 1`); got != 1 {
		t.Fatalf("after one step the small note has %d vectors, want 1", got)
	}
	visible := `SELECT count(*) FROM vectors v JOIN chunks c ON c.rowid = v.chunk WHERE c.doc_id = 'big.md'`
	if got := count(t, s, visible); got != 0 {
		t.Fatalf("%d vectors of the half-embedded big note are searchable", got)
	}
	for {
		n, empty := embedStep(t, s, 16, 8)
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
}

// A database error while PutVectors reads a chunk is an error, not a chunk
// that changed meanwhile (whose vector is dropped without a word).
func TestPutVectorsReportsDatabaseErrors(t *testing.T) {
	s := mustOpen(t, Options{})
	ctx := context.Background()
	mustApply(t, s, upserts(note("a.md", "some text")))
	pending, err := s.Vectors().Backlog(ctx, 64, 64)
	if err != nil || len(pending) != 1 {
		t.Fatal(pending, err)
	}
	if _, err := s.writer.Exec(`ALTER TABLE chunks RENAME COLUMN body TO body_gone`); err != nil {
		t.Fatal(err)
	}
	n, err := s.Vectors().PutVectors(ctx, []Vector{{RowID: pending[0].RowID, Text: pending[0].Text, Embedding: []float32{1, 0, 0, 0}}})
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
	for range 2 {
		embedStep(t, s, 16, 8)
	}
	for _, p := range small {
		if got := embeddedCount(t, s, p); got != 1 {
			t.Errorf("after two batches %s has %d vectors, want 1", p, got)
		}
	}
	mustApply(t, s, upserts(note("late.md", "a small note written while the large ones wait")))
	embedStep(t, s, 16, 8)
	if got := embeddedCount(t, s, "late.md"); got != 1 {
		t.Errorf("the batch after late.md was written left it with %d vectors, want 1", got)
	}
	embedAll(t, s, textVector)
	if st, _ := s.Stats(ctx); st.Vectors != st.Chunks || st.EmbeddingBacklog != 0 {
		t.Fatalf("after draining: %+v", st)
	}
}

// A note written while a large note is in its turn, part of that turn
// embedded (a batch cut short by time), goes first and alone in the next
// batch: neither behind the rest of the large note's turn nor beside it,
// so its vectors are published after its own chunks only.
func TestNewNoteGoesAloneBeforeTheRestOfATurn(t *testing.T) {
	s := mustOpen(t, Options{Chunking: markdown.ChunkOptions{TargetTokens: 60, MinTokens: 20, MaxTokens: 80}})
	ctx := context.Background()
	mustApply(t, s, upserts(bigNote("Big.md", 20_000)))
	embedStep(t, s, 3, 32)
	mustApply(t, s, upserts(note("Small.md", "a small note written during the big one's turn")))
	pending, err := s.Vectors().Backlog(ctx, 64, 32)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].DocID != "small.md" {
		var ids []string
		for _, p := range pending {
			ids = append(ids, p.DocID)
		}
		t.Fatalf("the batch after the small note was written: %v, want small.md alone", ids)
	}
	embedStep(t, s, 64, 32)
	if got := embeddedCount(t, s, "small.md"); got != 1 {
		t.Fatalf("the small note has %d vectors after its batch, want 1", got)
	}
	// The big note then finishes its turn: 32 chunks in all, the 3 of its
	// first batch and 29.
	if n, _ := embedStep(t, s, 64, 32); n != 29 {
		t.Errorf("the big note's next batch took %d chunks, want the 29 left of its turn", n)
	}
}

// A large note being embedded shows its progress: Stats counts its chunks
// embedded and held for the rest of it as staged (over open notes too,
// where a personal note's count moves nothing), and EmbeddingWaiting the
// chunks still to embed. Before, a 5 MB note sat at "backlog 1,455,
// vectors +0" for minutes (issue 40).
func TestStatsShowStagedProgress(t *testing.T) {
	s := mustOpen(t, Options{Chunking: markdown.ChunkOptions{TargetTokens: 60, MinTokens: 20, MaxTokens: 80},
		Sensitivity: Classifier{PersonalPaths: []string{"p/**"}}})
	ctx := context.Background()
	mustApply(t, s, upserts(bigNote("Open.md", 8_000), bigNote("p/Personal.md", 8_000)))
	openChunks := count(t, s, `SELECT count(*) FROM chunks WHERE doc_id = 'open.md'`)
	embedStep(t, s, 10, 5) // five chunks of each
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.EmbeddingStaged != 10 || st.OpenEmbeddingStaged != 5 || st.EmbeddingBacklog != st.Chunks || st.Vectors != 0 {
		t.Errorf("stats after one batch of a large open and a large personal note: staged %d (open %d), backlog %d of %d chunks, vectors %d; want staged 10 (open 5), the whole backlog, no vectors",
			st.EmbeddingStaged, st.OpenEmbeddingStaged, st.EmbeddingBacklog, st.Chunks, st.Vectors)
	}
	if st.OpenEmbeddingBacklog != openChunks {
		t.Errorf("open backlog %d, want the open note's %d chunks", st.OpenEmbeddingBacklog, openChunks)
	}
	if n, err := s.Vectors().EmbeddingWaiting(ctx); err != nil || n != st.Chunks-10 {
		t.Errorf("EmbeddingWaiting = %d, %v; want the %d chunks not staged", n, err, st.Chunks-10)
	}
	embedAll(t, s, textVector)
	if st, _ := s.Stats(ctx); st.EmbeddingStaged != 0 || st.OpenEmbeddingStaged != 0 || st.Vectors != st.Chunks {
		t.Errorf("after draining: staged %d (open %d), vectors %d of %d", st.EmbeddingStaged, st.OpenEmbeddingStaged, st.Vectors, st.Chunks)
	}
}

// BenchmarkSmallNotesBehindLargeNotes is how many batches of the default
// size (64 chunks, 32 a note a turn) pass, and how many chunks are embedded, before four small notes
// written after two 1 MB notes and a 5 MB note have their vectors. The
// embedder is the deterministic test one, so the time per op is the
// backlog's own cost; multiply the batches by the real embedder's time per
// batch for the wait a user sees.
//
//	go test -tags sqlite_fts5 -run '^$' -bench SmallNotesBehindLargeNotes -benchtime 1x ./index/
func BenchmarkSmallNotesBehindLargeNotes(b *testing.B) {
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
		b.StartTimer()
		batches, embedded := 0, 0
		for count(b, s, `SELECT count(*) FROM chunks WHERE doc_id LIKE 's_.md' AND embedded = 1`) < len(small) {
			n, empty := embedStep(b, s, 64, 32)
			if empty {
				b.Fatal("the backlog ran out before the small notes were embedded")
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
