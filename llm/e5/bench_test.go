package e5

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/llm/builtin"
)

// benchTexts returns n golden passages of the hub between 200 and 300
// tokens, cycling if there are fewer.
func benchTexts(b *testing.B, m *builtin.Encoder, n int) []string {
	var pool []string
	for _, gt := range mustGolden(b) {
		if strings.HasPrefix(gt.name, "hub.") && strings.Contains(gt.name, " chunk ") {
			if k := m.TokenCount(gt.text); k >= 200 && k <= 300 {
				pool = append(pool, gt.text)
			}
		}
	}
	if len(pool) == 0 {
		b.Skip("no hub passage of 200-300 tokens in the golden set")
	}
	out := make([]string, n)
	for i := range out {
		out[i] = pool[i%len(pool)]
	}
	return out
}

// withWorkers loads the model again, splitting its work across w
// goroutines; the benchmark closes it.
func withWorkers(b *testing.B, w int) *builtin.Encoder {
	m, err := load(&Spec, modelDir(), builtin.Options{Workers: w})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

// BenchmarkEmbed embeds 128 hub passages of 200-300 tokens in one call,
// as the index's embedder would, reporting chunks/s.
func BenchmarkEmbed(b *testing.B) {
	m := mustModel(b)
	texts := benchTexts(b, m, 128)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			mw := withWorkers(b, w)
			for b.Loop() {
				if _, err := mw.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}

// BenchmarkQuery embeds one ~15-token query a call, reporting the median
// latency as p50-ms.
func BenchmarkQuery(b *testing.B) {
	mustModel(b)
	q := "query: how do I sync my vault between two phones?"
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			mw := withWorkers(b, w)
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := mw.Embed(context.Background(), []string{q}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(mw.TokenCount(q)), "tokens")
		})
	}
}

// BenchmarkLoad loads the model and reports the live heap after a GC
// (heap-MB: the packed layer weights, the tokenizer's tables) and the
// process's resident set (rss-MB, Linux only: the test binary, the heap,
// and the pages of the mapped file read so far).
func BenchmarkLoad(b *testing.B) {
	var m *builtin.Encoder
	for b.Loop() {
		var err error
		if m, err = load(&Spec, modelDir(), builtin.Options{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	m, err := load(&Spec, modelDir(), builtin.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
				kb, _ := strconv.Atoi(f[1])
				b.ReportMetric(float64(kb)/1024, "rss-MB")
			}
		}
	}
}
