package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/feed"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

func runIndex(ctx context.Context, m *Main, args []string) error {
	fset, cfgPath := m.newFlagSet("index", "index [--from-dir PATH] [--rebuild] [--dry-run]")
	fromDir := fset.String("from-dir", "", "index this folder of markdown instead of the configured vault (vault.source)")
	rebuild := fset.Bool("rebuild", false, "re-read and re-chunk every note, and accept a changed embedding model by re-embedding everything")
	dryRun := fset.Bool("dry-run", false, "print what would be added, changed, removed and reclassified; write nothing")
	cfg, log, err := m.configure(fset, cfgPath, args)
	if err != nil {
		return err
	}

	dir := *fromDir
	if dir == "" {
		if cfg.Vault.Source != "folder" {
			return m.indexCouch(ctx, cfg, log, *dryRun, *rebuild)
		}
		dir = cfg.Vault.Path
	}
	start := time.Now()
	opts := storeOptions(cfg, log)
	if *dryRun {
		listing, err := feed.ScanFolder(dir, corpusOf(cfg))
		if err != nil {
			return err
		}
		return m.printPlan(ctx, opts, listing.Notes)
	}
	opts.Rebuild = *rebuild
	store, err := openIndex(ctx, opts)
	if err != nil {
		return err
	}
	defer store.Close()
	listing, res, err := feed.SyncFolder(ctx, store, dir, corpusOf(cfg), *rebuild)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "indexed %d notes from %s in %s: %d added, %d changed, %d touched, %d unchanged, %d removed, %d reclassified\n",
		len(listing.Notes), dir, time.Since(start).Round(time.Millisecond), res.Added, res.Changed, res.Touched, res.Unchanged, res.Deleted, len(res.Reclassified.Paths))
	for _, st := range listing.Skipped {
		fmt.Fprintf(m.Stdout, "skipped %q: %s\n", st.Path, st.Reason)
	}
	return m.embedBacklog(ctx, cfg, store, log)
}

func corpusOf(cfg config.Config) index.Corpus {
	return index.Corpus{Include: cfg.Corpus.Include, Exclude: cfg.Corpus.Exclude}
}

// printPlan is the dry run: it reads the index (if any) and writes nothing.
func (m *Main) printPlan(ctx context.Context, opts index.Options, listing []vault.NoteInput) error {
	var plan index.Plan
	var re index.Reclassified
	if _, err := os.Stat(opts.Path); errors.Is(err, fs.ErrNotExist) {
		for _, n := range listing {
			plan.Add = append(plan.Add, n.Path)
		}
	} else {
		opts.ReadOnly, opts.AsClassified = true, true
		store, err := openIndex(ctx, opts)
		if err != nil {
			return err
		}
		defer store.Close()
		if plan, err = store.Plan(ctx, listing); err != nil {
			return err
		}
		if re, err = store.Reclassify(ctx, true); err != nil {
			return err
		}
	}
	m.writePlan(plan, re)
	return nil
}

// writePlan prints a dry run's plan, one line per note, then the totals.
func (m *Main) writePlan(plan index.Plan, re index.Reclassified) {
	section := func(verb string, paths []string) {
		for _, p := range paths {
			fmt.Fprintf(m.Stdout, "%s %s\n", verb, p)
		}
	}
	section("add", plan.Add)
	section("change", plan.Change)
	section("touch", plan.Touch)
	section("remove", plan.Remove)
	section("reclassify", re.Paths)
	for _, p := range re.UnmatchedPatterns {
		fmt.Fprintf(m.Stdout, "warning: personal_paths pattern %q matches no note\n", p)
	}
	fmt.Fprintf(m.Stdout, "dry run: %d to add, %d to change, %d to touch, %d to remove, %d to reclassify, %d unchanged; nothing written\n",
		len(plan.Add), len(plan.Change), len(plan.Touch), len(plan.Remove), len(re.Paths), plan.Unchanged)
}
