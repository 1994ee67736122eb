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

	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/tstest/corpustext"
)

// The built-in models run on the shared encoder side by side on the same
// texts: e5 and bge.

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

// mustLoadEncoder loads the built-in model s from the default directory
// with workers; a model not run on llm/internal/bert's encoder (USE-lite)
// skips, and so does one whose files are not there.
func mustLoadEncoder(b *testing.B, s *builtin.Spec, workers int) *builtin.Encoder {
	m, err := s.Load(s.In(DefaultBuiltinDir()), builtin.Options{Workers: workers})
	if errors.Is(err, builtin.ErrModelNotFound) {
		b.Skipf("%v; vaultask fetch-model fetches it", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	enc, ok := m.(*builtin.Encoder)
	if !ok {
		m.Close()
		b.Skipf("%s does not run on the shared encoder", s.Name)
	}
	return enc
}

// BenchmarkBuiltinEmbed embeds 128 hub chunks in one call with each
// built-in encoder, as the index's embedder would, reporting chunks/s and
// the chunks' mean tokens.
func BenchmarkBuiltinEmbed(b *testing.B) {
	texts := benchCorpusTexts(b, 128)
	for _, s := range builtinModels {
		for _, w := range []int{1, 2} {
			b.Run(s.Name+"/workers="+string(rune('0'+w)), func(b *testing.B) {
				m := mustLoadEncoder(b, s, w)
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
	const question = "how do I sync my vault between two phones?"
	for _, s := range builtinModels {
		for _, w := range []int{1, 2} {
			b.Run(s.Name+"/workers="+string(rune('0'+w)), func(b *testing.B) {
				m := mustLoadEncoder(b, s, w)
				defer m.Close()
				var lat []time.Duration
				for b.Loop() {
					start := time.Now()
					if _, err := m.Embed(context.Background(), []string{s.Prefixes.Query + question}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(m.TokenCount(s.Prefixes.Query+question)), "tokens")
			})
		}
	}
}

// BenchmarkBuiltinLoad loads each built-in encoder and reports the live
// heap after a GC (heap-MB: the quantized layer weights, the tokenizer's
// tables; the word table stays in the file).
func BenchmarkBuiltinLoad(b *testing.B) {
	for _, s := range builtinModels {
		b.Run(s.Name, func(b *testing.B) {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			var m *builtin.Encoder
			for b.Loop() {
				if m != nil {
					b.StopTimer()
					_ = m.Close()
					b.StartTimer()
				}
				m = mustLoadEncoder(b, s, 0)
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
