package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vaultask/vaultask/devtools/bench"
)

func main() {
	size := flag.String("size", "full", "full (the published figures) or smoke (every scenario, tiny)")
	out := flag.String("out", "reports", "directory for BENCHMARKS.md and bench/")
	only := flag.String("only", "", "comma-separated section numbers to run (default all)")
	chunks := flag.String("chunks", "", "comma-separated chunk counts of the scale indexes (sections 3 and 8) instead of the size's")
	cache := flag.String("cache", defaultCache(), "cache of generated indexes, reused between runs")
	loads := flag.String("loads", "", "comma-separated background loads (notes/s) of section 1 instead of the size's")
	edits := flag.Int("edits", 0, "measured edits per load of section 1 instead of the size's (0: the size's)")
	models := flag.String("models", strings.Join(bench.DefaultModels, ","), "comma-separated built-in embedding models to measure (use-lite, e5, bge); the others are compared with the first, and sections 3, 6 and 8 run on it")
	dirty := flag.Bool("dirty", false, "measure a work tree with uncommitted changes (refused otherwise); the report marks the run")
	readme := flag.String("readme", "", "run nothing: rewrite this README's targets table, between its bench:targets markers, from OUT/bench/results.json")
	flag.Parse()
	var err error
	if *readme != "" {
		err = rewriteREADME(*readme, *out)
	} else {
		err = run(*size, *out, *only, *chunks, *loads, *edits, *cache, *models, !*dirty)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func defaultCache() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "vaultask-bench")
	}
	return filepath.Join(os.TempDir(), "vaultask-bench")
}

// rewriteREADME writes the targets table of the README at path from the
// results.json in out.
func rewriteREADME(path, out string) error {
	rep, err := bench.ReadReport(out)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if b, err = bench.RewriteREADME(b, rep); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, b, 0o644)
}

func run(size, out, only, chunks, loads string, edits int, cache, models string, clean bool) error {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return fmt.Errorf("go list -m: %w (run it inside the vaultask module)", err)
	}
	cfg := bench.Config{Size: size, Out: out, Root: strings.TrimSpace(string(root)), Cache: cache, Log: os.Stderr, Models: strings.Split(models, ","), Clean: clean}
	if only != "" {
		cfg.Only = strings.Split(only, ",")
	}
	if cfg.Chunks, err = counts("-chunks", chunks, 1); err != nil {
		return err
	}
	if cfg.Loads, err = counts("-loads", loads, 0); err != nil {
		return err
	}
	if edits < 0 {
		return fmt.Errorf("-edits: %d is negative", edits)
	}
	cfg.Edits = edits
	if dir := filepath.Join(cfg.Root, "..", "shared", "corpus"); fileExists(filepath.Join(dir, "MANIFEST.md")) {
		cfg.Corpus = dir
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	if _, err := bench.Run(ctx, cfg); err != nil {
		return err
	}
	fmt.Printf("wrote %s and %s in %s\n", filepath.Join(out, "BENCHMARKS.md"), filepath.Join(out, "bench"), time.Since(start).Round(time.Second))
	return nil
}

// counts parses a flag's comma-separated list of whole numbers, each at
// least lowest.
func counts(name, list string, lowest int) ([]int, error) {
	var ns []int
	for c := range strings.SplitSeq(list, ",") {
		if c == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < lowest {
			return nil, fmt.Errorf("%s: %q is not a whole number of at least %d", name, c, lowest)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
