package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

// BenchmarkSmallNoteBehindLargeNote is how long a small note written right
// after a large one (5 MB, some 1,500 chunks) waits for its vector with the
// built-in embedder, the background vectorizer running:
//
//	go test -tags sqlite_fts5 -run '^$' -bench SmallNoteBehindLargeNote -benchtime 1x ./cmd/vaultask/
func BenchmarkSmallNoteBehindLargeNote(b *testing.B) {
	emb := mustDefaultEmbedder(b, &Main{})
	var big strings.Builder
	for i := 0; big.Len() < 5<<20; i++ {
		fmt.Fprintf(&big, "## Part %d\n\n", i)
		for range 6 {
			fmt.Fprintf(&big, "Paragraph %d of the large note, about nothing in particular, long enough to be prose and to fill a chunk with words. ", i)
		}
		big.WriteString("\n\n")
	}
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		store, err := index.Open(ctx, index.Options{Path: filepath.Join(b.TempDir(), "i.db"), Space: spaceOf(emb.Spec())})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := store.Feed().Apply(ctx, index.Batch{Upserts: []vault.NoteInput{{Path: "Large.md", Rev: "1", Text: big.String()}}}); err != nil {
			b.Fatal(err)
		}
		v := vectorizer.New(store.Vectors(), emb, vectorizer.Options{})
		b.StartTimer()
		if err := v.Open(ctx); err != nil {
			b.Fatal(err)
		}
		written := time.Now()
		if _, err := store.Feed().Apply(ctx, index.Batch{Upserts: []vault.NoteInput{{Path: "Small.md", Rev: "1", Text: "A small note written after the large one."}}}); err != nil {
			b.Fatal(err)
		}
		for {
			hits, _, err := store.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll, Path: "Small.md"})
			if err != nil {
				b.Fatal(err)
			}
			if len(hits) == 1 && hits[0].Vectors == 1 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.ReportMetric(time.Since(written).Seconds(), "s-to-vector")
		b.StopTimer()
		v.Close(ctx)
		st, _ := store.Stats(ctx)
		b.ReportMetric(float64(st.Chunks), "chunks")
		store.Close()
	}
}
