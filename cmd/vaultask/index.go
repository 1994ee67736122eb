package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/index"
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
	return m.index(ctx, cfg, log, *fromDir, *dryRun, *rebuild)
}

// index is `vaultask index` and `vaultask reconcile`: the index made equal
// to the whole source (the folder dir instead, when set), then the
// embedding backlog embedded. rebuild re-chunks every note; dryRun prints
// the plan and writes nothing.
func (m *Main) index(ctx context.Context, cfg config.Config, log *slog.Logger, dir string, dryRun, rebuild bool) error {
	start := time.Now()
	src, err := openSource(ctx, cfg, log, dir)
	if err != nil {
		return err
	}
	defer src.close()
	opts, err := storeOptions(cfg, log)
	if err != nil {
		return err
	}
	if dryRun {
		return m.printPlan(ctx, src, opts)
	}
	opts.Rebuild = rebuild
	store, err := openIndex(ctx, opts)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := src.sync(ctx, store.Feed(), rebuild, m.Stdout, start); err != nil {
		return err
	}
	return m.embedBacklog(ctx, cfg, store, log)
}

// printPlan is the dry run: it reads the index, if there is one, and writes
// nothing, not even a new index file.
func (m *Main) printPlan(ctx context.Context, src source, opts index.Options) error {
	var d dryRun
	if _, err := os.Stat(opts.Path); errors.Is(err, fs.ErrNotExist) {
		l, err := src.list(ctx)
		if err != nil {
			return err
		}
		d = planAll(l)
	} else {
		// AsClassified: the dry run reports what reclassifying would change.
		opts.ReadOnly, opts.AsClassified = true, true
		store, err := openIndex(ctx, opts)
		if err != nil {
			return err
		}
		defer store.Close()
		if d, err = src.plan(ctx, store.Feed()); err != nil {
			return err
		}
	}
	for _, p := range d.kept {
		fmt.Fprintf(m.Stdout, "keep %s (not listed by _all_docs; found by key)\n", p)
	}
	printIncomplete(m.Stdout, d.incomplete)
	m.writePlan(d.plan, d.reclassified)
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
