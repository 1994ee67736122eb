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
	"github.com/vaultask/vaultask/feed"
	"github.com/vaultask/vaultask/index"
)

func runReconcile(ctx context.Context, m *Main, args []string) error {
	fset, cfgPath := m.newFlagSet("reconcile", "reconcile [--dry-run]")
	dryRun := fset.Bool("dry-run", false, "print what would be added, changed, removed and reclassified; write nothing")
	cfg, log, err := m.configure(fset, cfgPath, args)
	if err != nil {
		return err
	}
	if cfg.Vault.Source == "folder" {
		// A folder has no feed to miss changes: indexing it again is its
		// reconcile.
		return runIndex(ctx, m, args)
	}
	return m.indexCouch(ctx, cfg, log, *dryRun, false)
}

// connectCouch connects to the configured LiveSync database.
func connectCouch(ctx context.Context, cfg config.Config, log *slog.Logger) (*feed.Couch, error) {
	c, err := feed.Connect(ctx, feed.CouchOptions{
		URL:        cfg.Vault.URL,
		Database:   cfg.Vault.Database,
		User:       cfg.Vault.User,
		Password:   cfg.Vault.Password.Reveal(),
		Passphrase: cfg.Vault.Passphrase.Reveal(),
		CookieAuth: cfg.Vault.Auth == "cookie",
		Corpus:     corpusOf(cfg),
		Logger:     log,
	})
	return c, feedSetting(err)
}

// feedSetting says which setting fixes a feed error: the feed's errors name
// what is wrong, not the configuration.
func feedSetting(err error) error {
	switch {
	case errors.Is(err, feed.ErrUnauthorized):
		return fmt.Errorf("%w: check vault.user and the password in VAULTASK_VAULT__PASSWORD", err)
	case errors.Is(err, feed.ErrNoDatabase):
		return fmt.Errorf("%w: check vault.database (VAULTASK_VAULT__DATABASE)", err)
	case errors.Is(err, feed.ErrEncryptedVault):
		return fmt.Errorf("%w: set VAULTASK_VAULT__PASSPHRASE to the vault's LiveSync passphrase", err)
	}
	return err
}

// indexCouch is `vaultask index` and `vaultask reconcile` for a LiveSync
// vault: a full reconcile of the index with the database. rebuild re-chunks
// every note.
func (m *Main) indexCouch(ctx context.Context, cfg config.Config, log *slog.Logger, dryRun, rebuild bool) error {
	start := time.Now()
	couch, err := connectCouch(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer couch.Close()
	opts := storeOptions(cfg, log)
	if dryRun {
		return m.couchDryRun(ctx, couch, opts)
	}
	opts.Rebuild = rebuild
	store, err := openIndex(ctx, opts)
	if err != nil {
		return err
	}
	defer store.Close()
	res, err := feed.NewReconciler(couch, store).Run(ctx, feed.ReconcileOptions{Force: rebuild})
	if err != nil {
		return err
	}
	s := res.Sync
	fmt.Fprintf(m.Stdout, "indexed %d notes from couchdb database %s in %s: %d added, %d changed, %d touched, %d unchanged, %d removed, %d reclassified, %d incomplete\n",
		res.Notes, cfg.Vault.Database, time.Since(start).Round(time.Millisecond), s.Added, s.Changed, s.Touched, s.Unchanged, s.Deleted, len(s.Reclassified.Paths), len(res.Incomplete))
	m.printIncomplete(res.Incomplete)
	return m.embedBacklog(ctx, cfg, store, log)
}

// couchDryRun prints what a reconcile would do and writes nothing, not even
// a new index file.
func (m *Main) couchDryRun(ctx context.Context, couch *feed.Couch, opts index.Options) error {
	var res feed.ReconcileResult
	if _, err := os.Stat(opts.Path); errors.Is(err, fs.ErrNotExist) {
		l, err := feed.NewReconciler(couch, nil).List(ctx)
		if err != nil {
			return err
		}
		for _, n := range l.Notes {
			res.Plan.Add = append(res.Plan.Add, n.Path)
		}
		res.Incomplete = l.Incomplete
	} else {
		opts.AsClassified = true // the dry run reports what reclassifying would change
		store, err := openExisting(ctx, opts)
		if err != nil {
			return err
		}
		defer store.Close()
		if res, err = feed.NewReconciler(couch, store).Run(ctx, feed.ReconcileOptions{DryRun: true}); err != nil {
			return err
		}
	}
	for _, p := range res.Kept {
		fmt.Fprintf(m.Stdout, "keep %s (not listed by _all_docs; found by key)\n", p)
	}
	m.printIncomplete(res.Incomplete)
	m.writePlan(res.Plan, res.Reclassified)
	return nil
}

func (m *Main) printIncomplete(sts []index.NoteStatus) {
	for _, st := range sts {
		fmt.Fprintf(m.Stdout, "incomplete %s (%s): not indexed\n", st.Path, st.Reason)
	}
}
