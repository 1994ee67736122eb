package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vaultask/vaultask/vault"
)

// BenchmarkNearestChunks times the exact reads graph expansion makes of
// the notes it reaches, on BenchmarkRetrieve's index (-retrieve.index, or
// the generated vault's scale index) and questions: for each question, the
// notes one hop from the notes of its 8 nearest chunks, and each such
// note's chunk nearest the question (Search.NearestChunks: every chunk's
// vector read and its exact distance taken). It reports the median as
// p50-ms and the notes read per question. Expansion reads only the notes
// the distance bounds cannot rule out; this reads them all, so that the
// figure is the exact distances' cost at its largest.
func BenchmarkNearestChunks(b *testing.B) {
	ctx := context.Background()
	store, qs := retrieveBenchIndex(ctx, b)
	emb, err := (&modelRun{builtinModel: useLite}).embedder()
	if err != nil {
		b.Fatal(err)
	}
	vecs, err := queryVectors(ctx, emb, useLite.space, qs)
	if err != nil {
		b.Fatal(err)
	}
	reached := make([][]string, len(vecs))
	notes := 0
	for i, q := range vecs {
		hits, err := store.Search().SearchVector(ctx, q, 8, vault.ScopeAll)
		if err != nil {
			b.Fatal(err)
		}
		var starts []string
		for _, h := range hits {
			starts = append(starts, h.DocID)
		}
		hops, err := store.Search().Hops(ctx, starts, vault.ScopeAll)
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range hops {
			reached[i] = append(reached[i], h.To)
		}
		slices.Sort(reached[i])
		reached[i] = slices.Compact(reached[i])
		notes += len(reached[i])
	}
	b.Run(fmt.Sprintf("questions=%d", len(qs)), func(b *testing.B) {
		var took []float64
		for b.Loop() {
			i := len(took) % len(vecs)
			t := time.Now()
			if _, _, err := store.Search().NearestChunks(ctx, reached[i], vecs[i], vault.ScopeAll); err != nil {
				b.Fatal(err)
			}
			took = append(took, ms(time.Since(t)))
		}
		b.ReportMetric(summarize(took).Median, "p50-ms")
		b.ReportMetric(float64(notes)/float64(len(vecs)), "notes/question")
	})
}
