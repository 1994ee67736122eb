package main

import (
	"context"
	"time"

	"github.com/vaultask/vaultask/feed"
)

// follower is what `vaultask follow` runs: the LiveSync feed or a folder
// watch.
type follower interface {
	Open(ctx context.Context) error
	Done() <-chan struct{}
	Close(ctx context.Context) error
}

var (
	_ follower = (*feed.Follower)(nil)
	_ follower = (*feed.FolderFollower)(nil)
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
	store, err := openIndex(ctx, storeOptions(cfg, log))
	if err != nil {
		return err
	}
	defer store.Close()
	var f follower
	if cfg.Vault.Source == "folder" {
		f = feed.NewFolderFollower(cfg.Vault.Path, corpusOf(cfg), store, log)
	} else {
		couch, err := connectCouch(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer couch.Close()
		f = feed.NewFollower(couch, store, feed.FollowerOptions{ReconcileInterval: cfg.Index.ReconcileInterval})
	}
	if err := f.Open(ctx); err != nil {
		return err
	}
	stopVectors := m.startVectorizer(ctx, cfg, store, log)
	log.Info("following the vault until interrupted", "source", cfg.Vault.Source, "index", cfg.Index.Path)
	select {
	case <-ctx.Done():
	case <-f.Done():
	}
	stopVectors()
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	return feedSetting(f.Close(closeCtx))
}
