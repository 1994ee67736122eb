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
	"time"

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
	s.Command = "go run -tags sqlite_fts5 ./devtools/cmd/bench -only 4 -size " + r.cfg.Size
	emb, err := r.embedder()
	if err != nil {
		return err
	}
	texts := embedTexts(r.sz.embedN)
	tfN := min(len(texts), 32) // TF.js is slow: the first chunks give its rate
	tfjs := filepath.Join(r.cfg.Root, "devtools", "bench", "tfjs")
	s.Notes = append(s.Notes,
		fmt.Sprintf("Built-in embedder: %d generated chunks of about 200 tokens embedded in one call, %d runs per setting, after a warm-up call on the first %d chunks; threads is GOMAXPROCS, over which the built-in model spreads its windows.", len(texts), r.sz.runs, warmN),
		fmt.Sprintf("Baseline: the official TF.js runtime (`@energetic-ai/embeddings` 0.2.0 on `@energetic-ai/core`, pure-JS CPU backend, one thread) with the same model files, run by node from devtools/bench/tfjs in the same run: the first %d of those chunks in one call, %d runs, after the same warm-up call on the first %d. The rates are chunks/s, so the two compare though TF.js embeds fewer chunks; the ratio is Go ÷ TF.js.", tfN, r.sz.runs, warmN))
	if runtime.GOARCH != "arm64" {
		s.Notes = append(s.Notes, fmt.Sprintf("arm64 (Raspberry Pi, ARM NAS, Apple silicon) runs the built-in model on a NEON micro-kernel. This run is on %s, where scripts/test-arm64.sh checks that kernel for correctness only, under qemu-user-static (emulated speed says nothing about an arm64 CPU): its speed-up is not measured here. On an arm64 machine, `go test -run '^$' -bench Gemm ./llm/uselite/` compares it with the pure Go kernel.", runtime.GOARCH))
	}
	var tf []float64
	if _, err := os.Stat(filepath.Join(tfjs, "node_modules", "@energetic-ai", "embeddings")); err == nil {
		if tf, err = tfjsRates(ctx, tfjs, texts[:tfN], r.sz.runs); err != nil {
			return err
		}
	} else {
		s.Notes = append(s.Notes, "The TF.js reference is not installed here (scripts/setup.sh installs it into devtools/bench/tfjs): no baseline.")
	}
	for _, threads := range []int{1, runtime.NumCPU()} {
		prev := runtime.GOMAXPROCS(threads)
		if _, err := emb.EmbedDocuments(ctx, texts[:min(warmN, len(texts))]); err != nil { // warm-up, as embed.js does
			runtime.GOMAXPROCS(prev)
			return err
		}
		var rates []float64
		for range r.sz.runs {
			t := time.Now()
			if _, err := emb.EmbedDocuments(ctx, texts); err != nil {
				runtime.GOMAXPROCS(prev)
				return err
			}
			rates = append(rates, float64(len(texts))/time.Since(t).Seconds())
		}
		runtime.GOMAXPROCS(prev)
		row := s.add(fmt.Sprintf("built-in embedder (%s), %d thread(s), %d chunks", uselite.ModelID, threads, len(texts)), "chunks/s", rates)
		if tf != nil {
			row.against(fmt.Sprintf("TF.js reference, 1 thread, first %d chunks", tfN), tf)
		}
	}
	if tf != nil {
		s.add(fmt.Sprintf("TF.js reference runtime, 1 thread, first %d chunks", tfN), "chunks/s", tf)
	}
	return nil
}

// warmN is how many chunks the warm-up call of each embedder embeds.
const warmN = 2

// tfjsRates runs the TF.js reference on texts runs times, after a warm-up
// call on the first warmN, and returns its chunks/s.
func tfjsRates(ctx context.Context, dir string, texts []string, runs int) ([]float64, error) {
	in, _ := json.Marshal(map[string]any{"texts": texts, "runs": runs, "warm": warmN, "model": uselite.DefaultDir()})
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
