package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/feed"
)

// runReconcile is a full pass of the source into the index, as the
// follower makes now and then. A folder has no feed to miss changes:
// indexing it again is its reconcile.
func runReconcile(ctx context.Context, m *Main, args []string) error {
	fset, cfgPath := m.newFlagSet("reconcile", "reconcile [--dry-run]")
	dryRun := fset.Bool("dry-run", false, "print what would be added, changed, removed and reclassified; write nothing")
	cfg, log, err := m.configure(fset, cfgPath, args)
	if err != nil {
		return err
	}
	return m.index(ctx, cfg, log, "", *dryRun, false)
}

// couchOptions are the configured LiveSync database's.
func couchOptions(cfg config.Config, log *slog.Logger) feed.CouchOptions {
	return feed.CouchOptions{
		URL:        cfg.Vault.URL,
		Database:   cfg.Vault.Database,
		User:       cfg.Vault.User,
		Password:   cfg.Vault.Password.Reveal(),
		Passphrase: cfg.Vault.Passphrase.Reveal(),
		CookieAuth: cfg.Vault.Auth == "cookie",
		Corpus:     corpusOf(cfg),
		Logger:     log,
	}
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
