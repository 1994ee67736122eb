package main

import (
	"context"
	"time"
)

// closeTimeout bounds the wait for a follower to finish its transaction
// after SIGINT or SIGTERM.
const closeTimeout = 30 * time.Second

func runFollow(ctx context.Context, m *Main, args []string) error {
	fset, cfgPath := m.newFlagSet("follow", "follow")
	cfg, log, err := m.configure(fset, cfgPath, args)
	if err != nil {
		return err
	}
	opts, err := storeOptions(cfg, log)
	if err != nil {
		return err
	}
	store, err := openIndex(ctx, opts)
	if err != nil {
		return err
	}
	defer store.Close()
	src, err := newSource(cfg, log, "")
	if err != nil {
		return err
	}
	defer src.close()
	f := src.follower(store.Feed(), feedHooks{})
	if err := f.Open(ctx); err != nil {
		return err
	}
	stopVectors := m.startVectorizer(ctx, cfg, store, log)
	log.Info("following the vault until interrupted", keySource, cfg.Vault.Source, keyIndex, cfg.Index.Path)
	select {
	case <-ctx.Done():
	case <-f.Done():
	}
	stopVectors()
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	return feedSetting(f.Close(closeCtx))
}
