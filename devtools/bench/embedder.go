package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/llm/uselite"
)

// embedTexts are chunks of about 200 SentencePiece tokens (two 128-token
// windows), as a vault's sections are.
func embedTexts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = paragraph(rng(i, 23), 13)
	}
	return out
}

func embedderThroughput(ctx context.Context, r *run, s *Section) error {
	s.Command = r.reproduce("4")
	texts := embedTexts(r.sz.embedN)
	tfN := min(len(texts), 32) // TF.js is slow: the first chunks give its rate
	tfjs := filepath.Join(r.cfg.Root, "devtools", "bench", "tfjs")
	s.Notes = append(s.Notes,
		fmt.Sprintf("Built-in embedder: %d generated chunks of about 200 tokens (USE-lite's SentencePiece) embedded in one call as the index's embedder makes it (EmbedDocuments: e5 runs it on threads of the lowest priority, internal/lowprio, as index and serve do), %d runs per setting, after a warm-up call on the first %d chunks; threads (1, 2 and every core) is GOMAXPROCS and the model's workers (llm.EmbedderOptions.Workers), over which the built-in model spreads its work.", len(texts), r.sz.runs, warmN),
		fmt.Sprintf("Query embedding: one generated question a call (EmbedQueries, as a question is embedded, on the caller's goroutines at normal priority), %d calls over 50 questions after a warm-up pass over them, on %d threads (GOMAXPROCS and the model's workers: the issue's 2 cores, or fewer on a smaller machine); the target (issue 35's, for e5) is read on the p50.", r.sz.queries, embedCores()),
		fmt.Sprintf("Baseline: for USE-lite as the first model, the official TF.js runtime (`@energetic-ai/embeddings` 0.2.0 on `@energetic-ai/core`, pure-JS CPU backend, one thread) with the same model files, run by node from devtools/bench/tfjs in the same run: the first %d of those chunks in one call, %d runs, after the same warm-up call on the first %d. The rates are chunks/s, so the two compare though TF.js embeds fewer chunks; the ratio is Go ÷ TF.js. A model after the first is compared with the first in the same run, at the same threads.", tfN, r.sz.runs, warmN))
	if runtime.GOARCH != "arm64" {
		s.Notes = append(s.Notes, fmt.Sprintf("arm64 (Raspberry Pi, ARM NAS, Apple silicon) runs the built-in models on NEON micro-kernels. This run is on %s, where scripts/test-arm64.sh checks those kernels for correctness only, under qemu-user-static (emulated speed says nothing about an arm64 CPU): their speed-up is not measured here. On an arm64 machine, `go test -run '^$' -bench . ./llm/uselite/ ./llm/e5/` measures them.", runtime.GOARCH))
	}
	var tf []float64
	if r.first().name == useLite.name {
		if _, err := os.Stat(filepath.Join(tfjs, "node_modules", "@energetic-ai", "embeddings")); err == nil {
			if tf, err = tfjsRates(ctx, tfjs, texts[:tfN], r.sz.runs); err != nil {
				return err
			}
		} else {
			s.Notes = append(s.Notes, "The TF.js reference is not installed here (scripts/setup.sh installs it into devtools/bench/tfjs): no baseline.")
		}
	}
	if err := r.embedderRows(ctx, s, texts, tf, tfN); err != nil {
		return err
	}
	if tf != nil {
		s.add(fmt.Sprintf("TF.js reference runtime, 1 thread, first %d chunks", tfN), "chunks/s", tf)
	}
	return nil
}

// embedderRows adds each model's embedding rates and query embedding
// latency: the first's rates against the TF.js reference tf (of its first
// tfN texts) when there is one, the others' against the first's.
func (r *run) embedderRows(ctx context.Context, s *Section, texts []string, tf []float64, tfN int) error {
	firstRates := map[int][]float64{}
	var firstQuery []float64
	for i, m := range r.models {
		for _, threads := range threadCounts() {
			rates, err := embedRates(ctx, m, texts, threads, r.sz.runs)
			if err != nil {
				return err
			}
			row := s.add(fmt.Sprintf("built-in embedder (%s), %d thread(s), %d chunks", m.id, threads, len(texts)), "chunks/s", rates)
			switch {
			case i > 0:
				row.against(r.sameRun(fmt.Sprintf(", %d thread(s)", threads)), firstRates[threads])
			case tf != nil:
				row.against(fmt.Sprintf("TF.js reference, 1 thread, first %d chunks", tfN), tf)
			}
			if i == 0 {
				firstRates[threads] = rates
			}
		}
		q, err := queryLatency(ctx, m, r.sz.queries)
		if err != nil {
			return err
		}
		row := s.dist(fmt.Sprintf("query embedding (%s), one question a call, %d threads", m.id, embedCores()), "ms", q).target("p50 < 15 ms", median, 15, false)
		if i == 0 {
			firstQuery = q
		} else {
			row.against(r.sameRun(""), firstQuery)
		}
	}
	return nil
}

// threadCounts are the threads section 4 embeds on: one, the two of the
// issues' small machine, and every core.
func threadCounts() []int {
	return slices.Compact([]int{1, embedCores(), runtime.NumCPU()})
}

// embedRates embeds texts in one call runs times with m loaded on threads
// workers and GOMAXPROCS threads, after a warm-up call, and returns the
// chunks/s of each run.
func embedRates(ctx context.Context, m *modelRun, texts []string, threads, runs int) ([]float64, error) {
	prev := runtime.GOMAXPROCS(threads)
	defer runtime.GOMAXPROCS(prev)
	emb, err := m.load(threads)
	if err != nil {
		return nil, err
	}
	if _, err := emb.EmbedDocuments(ctx, texts[:min(warmN, len(texts))]); err != nil { // warm-up, as embed.js does
		return nil, err
	}
	var rates []float64
	for range runs {
		t := time.Now()
		if _, err := emb.EmbedDocuments(ctx, texts); err != nil {
			return nil, err
		}
		rates = append(rates, float64(len(texts))/time.Since(t).Seconds())
	}
	return rates, nil
}

// queryLatency embeds n generated questions one a call with m loaded on
// embedCores workers and GOMAXPROCS threads, after a warm-up pass over
// them, and returns each call's time in ms.
func queryLatency(ctx context.Context, m *modelRun, n int) ([]float64, error) {
	prev := runtime.GOMAXPROCS(embedCores())
	defer runtime.GOMAXPROCS(prev)
	emb, err := m.load(embedCores())
	if err != nil {
		return nil, err
	}
	qs := Questions(50)
	for _, q := range qs {
		if _, err := emb.EmbedQueries(ctx, []string{q}); err != nil {
			return nil, err
		}
	}
	var out []float64
	for i := range n {
		t := time.Now()
		if _, err := emb.EmbedQueries(ctx, []string{qs[i%len(qs)]}); err != nil {
			return nil, err
		}
		out = append(out, ms(time.Since(t)))
	}
	return out, nil
}

// warmN is how many chunks the warm-up call of each embedder embeds.
const warmN = 2

// tfjsRates runs the TF.js reference on texts runs times, after a warm-up
// call on the first warmN, and returns its chunks/s.
func tfjsRates(ctx context.Context, dir string, texts []string, runs int) ([]float64, error) {
	in, _ := json.Marshal(map[string]any{"texts": texts, "runs": runs, "warm": warmN, "model": filepath.Join(llm.DefaultBuiltinDir(), uselite.Spec.Dir)})
	cmd := exec.CommandContext(ctx, "node", "embed.js")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return nil, fmt.Errorf("TF.js reference: %w\n%s", err, stderr)
	}
	var res struct {
		Rates []float64 `json:"rates"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("TF.js reference said %q: %w", out, err)
	}
	return res.Rates, nil
}
