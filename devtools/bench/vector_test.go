package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

var (
	vecIndex  = flag.String("vec.index", "", "index for BenchmarkSearchVector (default: the generated vault grown to -vec.chunks chunks with pool vectors, built in the user's cache dir when missing, which takes a while)")
	vecChunks = flag.Int("vec.chunks", 100_000, "chunks of the generated vault BenchmarkSearchVector searches")
)

// BenchmarkSearchVector times the vector arm alone, the int8 vector set with
// its float rescore against brute force over every float vector, at the default top k
// over the 50 generated questions embedded by the built-in model, on an
// index whose vectors are the pool's (real USE-lite vectors plus noise, see
// poolEmbedder). The shortlist's runs report its recall@k against brute
// force (the mean share of brute force's top k it returns, over the 50
// questions), the time reading the shortlist takes (the first search
// starts it, and searches by brute force until it ends) and the heap the
// shortlist holds.
func BenchmarkSearchVector(b *testing.B) {
	ctx := context.Background()
	path := *vecIndex
	if path == "" {
		var err error
		if path, err = vecBenchIndex(ctx, b, *vecChunks); err != nil {
			b.Fatal(err)
		}
	}
	// A copy, with its WAL if it has one, opened as serve opens it (a
	// writer): the file given is never written to.
	work := filepath.Join(b.TempDir(), "vec.db")
	if err := copyFile(path, work); err != nil {
		b.Fatal(err)
	}
	if exists(path + "-wal") {
		if err := copyFile(path+"-wal", work+"-wal"); err != nil {
			b.Fatal(err)
		}
	}
	t := time.Now()
	store, err := index.Open(ctx, index.Options{Path: work, Space: useLite.space,
		Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("opened in %v", time.Since(t))
	b.Cleanup(func() { _ = store.Close() })
	st, err := store.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	emb, err := (&modelRun{builtinModel: useLite}).embedder()
	if err != nil {
		b.Fatal(err)
	}
	qs, err := queryVectors(ctx, emb, useLite.space, Questions(50))
	if err != nil {
		b.Fatal(err)
	}
	k := settings().VectorTopK

	// Reading the shortlist (which the first search starts): its time and
	// what it holds.
	var before, after runtime.MemStats
	// Twice: what sync.Pools hold survives one collection.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	t = time.Now()
	if err := store.Search().WarmVectorSearch(ctx); err != nil {
		b.Fatal(err)
	}
	first := time.Since(t)
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc)

	scopes := []struct {
		name  string
		scope vault.Scope
	}{{"all", vault.ScopeAll}, {"open", vault.ScopeOpen}}
	for _, sc := range scopes {
		recall, err := vectorRecall(ctx, store, qs, k, sc.scope)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range []struct {
			name   string
			search func(context.Context, vault.QueryVector, int, vault.Scope) ([]vault.Chunk, error)
		}{{"shortlist", store.Search().SearchVector}, {"exact", store.Search().SearchVectorExact}} {
			b.Run(fmt.Sprintf("chunks=%d/%s/%s", st.Vectors, m.name, sc.name), func(b *testing.B) {
				var took []float64
				for b.Loop() {
					t := time.Now()
					hits, err := m.search(ctx, qs[len(took)%len(qs)], k, sc.scope)
					if err != nil {
						b.Fatal(err)
					}
					took = append(took, ms(time.Since(t)))
					if len(hits) != k {
						b.Fatalf("%d hits, want %d", len(hits), k)
					}
				}
				b.ReportMetric(summarize(took).Median, "p50-ms")
				if m.name == "shortlist" {
					b.ReportMetric(recall, fmt.Sprintf("recall@%d", k))
					b.ReportMetric(float64(first.Milliseconds()), "read-ms")
					b.ReportMetric(held/(1<<20), "heap-MB")
				}
			})
		}
	}
}

// vecBenchIndex is the generated vault grown to chunks chunks with pool
// vectors: section 3's scale index of that size, from the same cache.
func vecBenchIndex(ctx context.Context, b *testing.B, chunks int) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	r := &run{cfg: Config{Size: "full", Cache: filepath.Join(cache, "vaultask-bench")}, sz: sizeTable["full"], log: quiet, work: b.TempDir()}
	t := scaleTarget{Chunks: chunks}
	ixs, err := r.scaleIndexes(ctx, &modelRun{builtinModel: useLite}, []scaleTarget{t})
	if err != nil {
		return "", err
	}
	return ixs[t].Path, nil
}
