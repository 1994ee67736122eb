package vectorizer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/llm/bge"
	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/vault"
)

// mustBGE is the built-in bge model as serve builds it (passages on its
// background threads), from the default model directory; the test is
// skipped without it unless VAULTASK_REQUIRE_MODELS=1.
func mustBGE(t *testing.T) *llm.Embedding {
	t.Helper()
	e, err := llm.NewEmbedder(bge.Spec.ID, llm.EmbedderOptions{})
	if errors.Is(err, builtin.ErrModelNotFound) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// heldEmbedder passes each call to the real model and records its texts.
// Its first call, once begun, waits until release is closed, and its third
// and later calls until the context ends: the test sees the index as the
// first two calls left it.
type heldEmbedder struct {
	emb     Embedder
	begun   chan struct{}
	release chan struct{}
	mu      sync.Mutex
	calls   [][]string
}

func (h *heldEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	h.mu.Lock()
	h.calls = append(h.calls, slices.Clone(texts))
	n := len(h.calls)
	h.mu.Unlock()
	switch {
	case n == 1:
		close(h.begun)
		<-h.release
	case n > 2:
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return h.emb.EmbedDocuments(ctx, texts)
}

// A one-line note written while bge embeds a big note's batch is embedded
// in the next call, alone, before the rest of the big note: not beside the
// rest of the big note's turn (with batches of 64 chunks, bge's next call
// held the small note and 63 chunks of the big one, 10–46 s of waiting in
// issue 40). Through the real vectorizer, index and model; the first call
// is held until the small note is written, so the order does not depend on
// the machine's speed.
func TestSmallNoteGoesBeforeTheRestOfABigNoteWithBGE(t *testing.T) {
	ctx := context.Background()
	emb := mustBGE(t)
	sp := emb.Spec()
	// Small chunks, so that a 64-chunk batch takes about as long as the
	// first batch cut to bge's time: the test takes as long either way.
	s, err := index.Open(ctx, index.Options{Path: filepath.Join(t.TempDir(), "index.db"), Logger: quiet(),
		Space:    vault.EmbeddingSpace{Model: sp.Model, Dim: sp.Dim, QueryPrefix: sp.Prefixes.Query, DocumentPrefix: sp.Prefixes.Document},
		Chunking: markdown.ChunkOptions{TargetTokens: 60, MinTokens: 20, MaxTokens: 80}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var big strings.Builder
	for i := 0; big.Len() < 40<<10; i++ {
		fmt.Fprintf(&big, "## Part %d\n\n", i)
		for j := range 4 {
			fmt.Fprintf(&big, "The kettle on shelf %d holds note %d of part %d. ", j, i*40+j, i)
		}
		big.WriteString("\n\n")
	}
	mustApply(t, s, note("Big.md", big.String()))
	bigChunks := mustStats(t, s).Chunks
	if bigChunks < 130 {
		t.Fatalf("the big note has %d chunks, want more than a 64-chunk batch and a few", bigChunks)
	}
	h := &heldEmbedder{emb: emb, begun: make(chan struct{}), release: make(chan struct{})}
	v := New(s.Vectors(), h, Options{Logger: quiet()})
	if err := v.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer v.Close(ctx)
	<-h.begun
	const line = "Buy oat milk and a new kettle descaler."
	mustApply(t, s, note("Small.md", line))
	close(h.release)
	calls := func() [][]string {
		h.mu.Lock()
		defer h.mu.Unlock()
		return slices.Clone(h.calls)
	}
	waitWithin(t, 5*time.Minute, func() bool { return len(calls()) >= 2 })
	if got := calls()[1]; len(got) != 1 || !strings.Contains(got[0], line) {
		t.Fatalf("the call after the small note was written held %d texts (%.80q…), want the small note alone", len(got), got[:min(len(got), 2)])
	}
	// Only the small note can be searchable: the big one is published
	// with its last chunk.
	waitWithin(t, 5*time.Minute, func() bool { return mustStats(t, s).Vectors == 1 })
	waiting, err := s.Vectors().Backlog(ctx, math.MaxInt32, math.MaxInt32)
	if err != nil || len(waiting) == 0 || waiting[0].DocID != "big.md" {
		t.Errorf("the big note's chunks waiting when the small note was searchable: %d (%v), want the most of them", len(waiting), err)
	}
	q, err := emb.EmbedQueries(ctx, []string{"where is the kettle descaler on my shopping list?"})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search().SearchVector(ctx, vault.QueryVector{Space: s.Search().ActiveSpace(), Values: q[0]}, 1, vault.ScopeAll)
	if err != nil || len(hits) != 1 || hits[0].Path != "Small.md" {
		t.Errorf("vector search for the small note: %+v, %v", hits, err)
	}
}
