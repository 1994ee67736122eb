package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/vaultask/vaultask/eval"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/rag"
)

var (
	retrieveIndex     = flag.String("retrieve.index", "", "an existing index BenchmarkRetrieve opens read-only as classified, e.g. /tmp/hub.db (default: the generated vault's scale index of -retrieve.chunks chunks, from the bench cache, built when missing)")
	retrieveQuestions = flag.String("retrieve.questions", "", "a questions file (eval's TSV) for -retrieve.index (default: the generated questions)")
	retrieveChunks    = flag.Int("retrieve.chunks", 100_000, "chunks of the generated vault's scale index")
)

// BenchmarkRetrieve times the default retrieval as the daemon runs it
// (vector and full-text search, fusion, graph expansion, no rerank, the
// built-in embedder) under each scope (a question with allow_web sees open
// notes only, which also resolves again the links to personal notes) with
// graph expansion on and off, so the difference is what expansion costs.
// Beside Go's mean it reports the median as p50-ms, and the process's CPU
// time per question as cpu-ms, which other work on a shared machine moves
// less than the wall clock. The vector shortlist is read before the first
// question, so every vector search goes through it.
func BenchmarkRetrieve(b *testing.B) {
	ctx := context.Background()
	store, qs := retrieveBenchIndex(ctx, b)
	st, err := store.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	emb, err := (&modelRun{builtinModel: useLite}).embedder()
	if err != nil {
		b.Fatal(err)
	}
	on, err := rag.New(rag.Options{Searcher: store.Search(), Embedder: rag.SpaceEmbedder{Texts: emb, Space: useLite.space}, Settings: settings(), Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	off := settings()
	off.GraphEnabled = false
	for _, scope := range []struct {
		name     string
		allowWeb bool
	}{{"all", false}, {"open", true}} {
		for _, c := range []struct {
			graph    string
			settings rag.Settings
		}{{"on", settings()}, {"off", off}} {
			p, err := on.WithSettings(c.settings)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("chunks=%d/scope=%s/graph=%s", st.Chunks, scope.name, c.graph), func(b *testing.B) {
				ask := func(i int) *rag.Retrieval {
					res, err := p.Retrieve(ctx, rag.Question{Text: qs[i%len(qs)], AllowWeb: scope.allowWeb})
					if err != nil {
						b.Fatal(err)
					}
					return res
				}
				for i := range qs { // warm: the page cache and SQLite's
					ask(i)
				}
				var took []time.Duration
				cpu := cpuTime()
				i := 0
				for b.Loop() {
					t := time.Now()
					res := ask(i)
					took = append(took, time.Since(t))
					if len(res.Hits) == 0 {
						b.Fatalf("no hit for %q", qs[i%len(qs)])
					}
					i++
				}
				b.ReportMetric(ms(cpuTime()-cpu)/float64(len(took)), "cpu-ms")
				slices.Sort(took)
				b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
			})
		}
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// retrieveBenchIndex opens BenchmarkRetrieve's index and returns the
// questions to ask it.
func retrieveBenchIndex(ctx context.Context, b testing.TB) (*index.Store, []string) {
	b.Helper()
	path, qs := *retrieveIndex, Questions(50)
	if path == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			b.Fatal(err)
		}
		r := &run{cfg: Config{Size: "full", Cache: filepath.Join(cache, "vaultask-bench")}, sz: sizeTable["full"], log: quiet, work: b.TempDir()}
		t := scaleTarget{Chunks: *retrieveChunks}
		ixs, err := r.scaleIndexes(ctx, &modelRun{builtinModel: useLite}, []scaleTarget{t})
		if err != nil {
			b.Fatal(err)
		}
		path = ixs[t].Path
	} else if *retrieveQuestions != "" {
		f, err := eval.ReadQuestions(*retrieveQuestions)
		if err != nil {
			b.Fatal(err)
		}
		qs = qs[:0]
		for _, q := range f.Questions {
			qs = append(qs, q.Text)
		}
	}
	// An index given is read as it was classified: a read-only benchmark
	// must not reclassify it.
	store, err := index.Open(ctx, index.Options{Path: path, Space: useLite.space, ReadOnly: true, AsClassified: *retrieveIndex != "",
		Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	if err := store.Search().WarmVectorSearch(ctx); err != nil {
		b.Fatal(err)
	}
	return store, qs
}
