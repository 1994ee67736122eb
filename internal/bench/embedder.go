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
	s.Command = "go run -tags sqlite_fts5 ./internal/cmd/bench -only 4 -size " + r.cfg.Size
	emb, err := r.embedder()
	if err != nil {
		return err
	}
	texts := embedTexts(r.sz.embedN)
	tfjs := filepath.Join(r.cfg.Root, "internal", "bench", "tfjs")
	s.Notes = append(s.Notes,
		fmt.Sprintf("%d generated chunks of about 200 tokens embedded in one call, %d runs per setting; threads is GOMAXPROCS, over which the built-in model spreads its windows.", len(texts), r.sz.runs),
		"Baseline: the official TF.js runtime (`@energetic-ai/embeddings` 0.2.0 on `@energetic-ai/core`, pure-JS CPU backend, one thread) with the same model files and the same chunks, run by node from internal/bench/tfjs in the same run; the ratio is Go ÷ TF.js.")
	var tf []float64
	if _, err := os.Stat(filepath.Join(tfjs, "node_modules", "@energetic-ai", "embeddings")); err == nil {
		n := min(len(texts), 32) // it is slow: a subset gives its rate
		if tf, err = tfjsRates(ctx, tfjs, texts[:n], r.sz.runs); err != nil {
			return err
		}
	} else {
		s.Notes = append(s.Notes, "The TF.js reference is not installed here (scripts/setup.sh installs it into internal/bench/tfjs): no baseline.")
	}
	for _, threads := range []int{1, runtime.NumCPU()} {
		prev := runtime.GOMAXPROCS(threads)
		var rates []float64
		for range r.sz.runs {
			t := time.Now()
			if _, err := emb.Embed(ctx, texts); err != nil {
				runtime.GOMAXPROCS(prev)
				return err
			}
			rates = append(rates, float64(len(texts))/time.Since(t).Seconds())
		}
		runtime.GOMAXPROCS(prev)
		row := s.add(fmt.Sprintf("built-in embedder (%s), %d thread(s)", uselite.ModelID, threads), "chunks/s", rates)
		if tf != nil {
			row.against("TF.js reference, 1 thread", tf)
		}
	}
	if tf != nil {
		s.add("TF.js reference runtime, 1 thread", "chunks/s", tf)
	}
	return nil
}

// tfjsRates runs the TF.js reference on texts runs times and returns its
// chunks/s.
func tfjsRates(ctx context.Context, dir string, texts []string, runs int) ([]float64, error) {
	in, _ := json.Marshal(map[string]any{"texts": texts, "runs": runs, "model": uselite.DefaultDir()})
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
