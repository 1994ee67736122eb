package llm

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/vaultask/vaultask/llm/bge"
	"github.com/vaultask/vaultask/llm/e5"
	"github.com/vaultask/vaultask/tstest/corpustext"
)

// The built-in encoders side by side on the same texts: e5 and bge.

// benchCorpusTexts returns the first n chunks (by document id) of the hub
// corpus of 800 to 1,400 characters, about 200 to 300 tokens for both
// models (tstest/corpustext finds the corpus).
func benchCorpusTexts(b *testing.B, n int) []string {
	docs, err := corpustext.Read(filepath.Join(corpustext.Require(b), "hub.all_docs.json.gz"))
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, id := range slices.Sorted(maps.Keys(docs)) {
		if s, ok := docs[id].Data.(string); ok && len(docs[id].Children) == 0 && len(s) >= 800 && len(s) <= 1400 {
			out = append(out, s)
		}
		if len(out) == n {
			return out
		}
	}
	b.Skipf("the hub corpus has %d chunks of 800-1400 characters, not %d", len(out), n)
	return nil
}

// builtinEncoder is what the benchmarks ask of e5.Model and bge.Model.
type builtinEncoder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	TokenCount(text string) int
	Close() error
}

var builtinEncoders = []struct {
	name  string
	query string
	load  func(workers int) (builtinEncoder, error)
}{
	{"e5", "query: how do I sync my vault between two phones?", func(w int) (builtinEncoder, error) {
		return e5.Load(modelDir(DefaultBuiltinDir(), e5.DirName, e5.FileName), e5.Options{Workers: w})
	}},
	{"bge", representInstruction + "how do I sync my vault between two phones?", func(w int) (builtinEncoder, error) {
		return bge.Load(modelDir(DefaultBuiltinDir(), bge.DirName, bge.FileName), bge.Options{Workers: w})
	}},
}

func mustLoadBuiltin(b *testing.B, load func(int) (builtinEncoder, error), workers int) builtinEncoder {
	m, err := load(workers)
	if errors.Is(err, e5.ErrModelNotFound) || errors.Is(err, bge.ErrModelNotFound) {
		b.Skipf("%v; scripts/fetch-model.sh fetches it", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkBuiltinEmbed embeds 128 hub chunks in one call with each
// built-in encoder, as the index's embedder would, reporting chunks/s and
// the chunks' mean tokens.
func BenchmarkBuiltinEmbed(b *testing.B) {
	texts := benchCorpusTexts(b, 128)
	for _, enc := range builtinEncoders {
		for _, w := range []int{1, 2} {
			b.Run(enc.name+"/workers="+string(rune('0'+w)), func(b *testing.B) {
				m := mustLoadBuiltin(b, enc.load, w)
				defer m.Close()
				for b.Loop() {
					if _, err := m.Embed(context.Background(), texts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "chunks/s")
				tokens := 0
				for _, t := range texts {
					tokens += m.TokenCount(t)
				}
				b.ReportMetric(float64(tokens)/float64(len(texts)), "tokens/chunk")
			})
		}
	}
}

// BenchmarkBuiltinQuery embeds one question (with each model's query
// prefix) a call, reporting the median latency as p50-ms.
func BenchmarkBuiltinQuery(b *testing.B) {
	for _, enc := range builtinEncoders {
		for _, w := range []int{1, 2} {
			b.Run(enc.name+"/workers="+string(rune('0'+w)), func(b *testing.B) {
				m := mustLoadBuiltin(b, enc.load, w)
				defer m.Close()
				var lat []time.Duration
				for b.Loop() {
					start := time.Now()
					if _, err := m.Embed(context.Background(), []string{enc.query}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(m.TokenCount(enc.query)), "tokens")
			})
		}
	}
}

// BenchmarkBuiltinLoad loads each built-in encoder and reports the live
// heap after a GC (heap-MB: the quantized layer weights, the tokenizer's
// tables; the word table stays in the file).
func BenchmarkBuiltinLoad(b *testing.B) {
	for _, enc := range builtinEncoders {
		b.Run(enc.name, func(b *testing.B) {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			var m builtinEncoder
			for b.Loop() {
				if m != nil {
					b.StopTimer()
					_ = m.Close()
					b.StartTimer()
				}
				m = mustLoadBuiltin(b, enc.load, 0)
			}
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapInuse-min(after.HeapInuse, before.HeapInuse))/(1<<20), "heap-MB")
			runtime.KeepAlive(m)
			_ = m.Close()
		})
	}
}
