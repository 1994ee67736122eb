package feed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/internal/routine"
	"github.com/vaultask/vaultask/vault"
)

// FolderListing is a vault folder as one scan saw it: the notes to index,
// and the corpus files that are not indexed, with the reason.
type FolderListing struct {
	Notes   []vault.NoteInput
	Skipped []index.NoteStatus
}

// ScanFolder reads every note of a vault folder that corpus selects. Paths
// are vault-relative with forward slashes; a note's revision is its
// modification time, so a touched file is a new revision of the same text.
// A file whose name cannot be a vault path (a line break in it) is skipped.
// A scan that finds a file or folder gone by the time it reads it (deleted
// or renamed while the scan ran, or the share going away under it) fails
// with errFolderChanged, as any other error fails it: nothing is removed
// from the index on a listing that may be short, and the next scan sees
// the folder as it is then.
func ScanFolder(dir string, corpus Corpus) (FolderListing, error) {
	var l FolderListing
	gone := false
	root, err := filepath.Abs(dir)
	if err != nil {
		return l, err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return l, fmt.Errorf("vault folder %s: not a readable directory", dir)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return goneOr(&gone, p != root, err)
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !corpus.Match(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return goneOr(&gone, true, err)
		}
		rev := strconv.FormatInt(info.ModTime().UnixNano(), 10)
		if _, err := vault.CleanPath(rel); err != nil {
			l.Skipped = append(l.Skipped, index.NoteStatus{SourceID: rel, Path: rel, Rev: rev, State: vault.StatusSkipped, Reason: err.Error()})
			return nil
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return goneOr(&gone, true, err)
		}
		l.Notes = append(l.Notes, vault.NoteInput{Path: rel, Rev: rev, Text: string(text), MTime: info.ModTime()})
		return nil
	})
	if err == nil && gone {
		err = errFolderChanged
	}
	if err != nil {
		return l, fmt.Errorf("scan vault folder %s: %w", dir, err)
	}
	sort.Slice(l.Notes, func(i, j int) bool { return l.Notes[i].Path < l.Notes[j].Path })
	return l, nil
}

// errFolderChanged fails a scan that found part of the folder gone.
var errFolderChanged = errors.New("a file or folder went away while it was read; the next scan reads it again")

// goneOr is nil for an error that says a file or folder of the vault is
// gone, when it may be (not the vault folder itself), and notes that in
// gone; else it is err.
func goneOr(gone *bool, mayBeGone bool, err error) error {
	if mayBeGone && errors.Is(err, fs.ErrNotExist) {
		*gone = true
		return nil
	}
	return err
}

// SyncFolder makes the index equal the folder dir, as the Reconciler does
// for a LiveSync database: changed notes re-indexed, notes gone removed,
// sensitivity recomputed, the skipped files recorded, the run marked.
// force re-chunks every note (`--rebuild`).
func SyncFolder(ctx context.Context, store *index.Feed, dir string, corpus Corpus, force bool) (FolderListing, index.SyncResult, error) {
	l, err := ScanFolder(dir, corpus)
	if err != nil {
		return l, index.SyncResult{}, err
	}
	plan, err := store.Plan(ctx, l.Notes)
	if err != nil {
		return l, index.SyncResult{}, err
	}
	res, err := store.Sync(ctx, l.Notes, plan, index.SyncOptions{Force: force})
	if err != nil {
		return l, res, err
	}
	if err := store.ReplaceNoteStatus(ctx, l.Skipped); err != nil {
		return l, res, err
	}
	return l, res, store.MarkRun(ctx, time.Now())
}

// FolderFollower indexes a plain vault folder and keeps it indexed: file
// system events, debounced, trigger a rescan whose diff is applied as a
// reconcile does (changed notes re-indexed, deleted ones removed). It is the
// small second source for vaults without LiveSync.
type FolderFollower struct {
	dir    string
	corpus Corpus
	store  *index.Feed
	log    *slog.Logger
	// Debounce is how long the folder must be quiet before a rescan.
	// Default 500ms.
	Debounce time.Duration
	// Retry is how long after a failed rescan (the folder unmounted, a
	// file it cannot read) the next one runs, if no change comes first.
	// The index is left as it was. Default (and when not above 0) 10s.
	Retry time.Duration
	// OnSync, when set, is called from the follower's goroutine after each
	// rescan that changed the index.
	OnSync func(index.SyncResult)

	life routine.Routine // the follower's goroutine

	mu    sync.Mutex
	stats FolderStats
}

// FolderStats is what a FolderFollower has done.
type FolderStats struct {
	// CaughtUp is set once the folder was indexed whole.
	CaughtUp bool
	// LastSync is when the folder was last rescanned, LastChangeAt when a
	// rescan last changed the index.
	LastSync, LastChangeAt time.Time
	LastError              string
}

// Stats returns a snapshot of the follower's state.
func (f *FolderFollower) Stats() FolderStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// NewFolderFollower returns a follower of the folder dir; Open starts it.
func NewFolderFollower(dir string, corpus Corpus, store *index.Feed, log *slog.Logger) *FolderFollower {
	if log == nil {
		log = slog.Default()
	}
	return &FolderFollower{dir: dir, corpus: corpus, store: store, log: log.With(logComponent, "feed"),
		Debounce: 500 * time.Millisecond, Retry: defaultFolderRetry}
}

// Open starts watching the folder, then indexes it whole and keeps it
// indexed in a goroutine owned by the follower.
func (f *FolderFollower) Open(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch vault folder %s: %w", f.dir, err)
	}
	if err := watchTree(w, f.dir); err != nil {
		w.Close()
		return err
	}
	err = f.life.Start(ctx, func(ctx context.Context) error {
		defer w.Close()
		return f.run(ctx, w)
	})
	if err != nil {
		w.Close()
	}
	return err
}

func (f *FolderFollower) run(ctx context.Context, w *fsnotify.Watcher) error {
	var quiet <-chan time.Time
	failed := false
	rescan := func() {
		// After a failure the folder may be another one (a share mounted
		// again), whose watches went with the old one: watched again
		// before the rescan, so no change after it is missed.
		var werr error
		if failed {
			werr = watchTree(w, f.dir)
		}
		err := f.sync(ctx)
		if err != nil && ctx.Err() == nil {
			quiet = time.After(f.retry())
		} else if err == nil && werr != nil {
			f.log.Warn("cannot watch the vault folder again", keyPath, f.dir, keyErr, werr)
		}
		failed = err != nil
	}
	rescan()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					if err := watchTree(w, ev.Name); err != nil {
						f.log.Warn("cannot watch a new folder", keyPath, ev.Name, keyErr, err)
					}
				}
			}
			quiet = time.After(f.Debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// Events may have been lost: rescan once the folder is quiet.
			f.log.Warn("folder watch error; rescanning", keyErr, err)
			quiet = time.After(f.Debounce)
		case <-quiet:
			quiet = nil
			rescan()
		}
	}
}

// defaultFolderRetry is FolderFollower.Retry when it is not above 0.
const defaultFolderRetry = 10 * time.Second

// retry is how long after a failed rescan the next one runs.
func (f *FolderFollower) retry() time.Duration {
	if f.Retry <= 0 {
		return defaultFolderRetry
	}
	return f.Retry
}

// sync makes the index equal the folder. A failed rescan leaves the index
// as it was and is logged when it starts failing and when it recovers.
func (f *FolderFollower) sync(ctx context.Context) error {
	_, res, err := SyncFolder(ctx, f.store, f.dir, f.corpus, false)
	now := time.Now()
	f.mu.Lock()
	failing := f.stats.LastError != ""
	f.stats.LastSync, f.stats.LastError = now, ""
	if err != nil {
		f.stats.LastError = err.Error()
	} else {
		f.stats.CaughtUp = true
		if res.Written() {
			f.stats.LastChangeAt = now
		}
	}
	f.mu.Unlock()
	if err != nil {
		if !failing && ctx.Err() == nil {
			f.log.Warn("vault folder rescan failed: the index is kept as it was; retrying", keyPath, f.dir, keyErr, err, keyWait, f.retry())
		}
		return err
	}
	if failing {
		f.log.Info("vault folder readable again", keyPath, f.dir)
	}
	if res.Written() {
		f.log.Info("vault folder indexed", keyPath, f.dir, keyAdded, res.Added, keyChanged, res.Changed, keyRemoved, res.Deleted)
		if f.OnSync != nil {
			f.OnSync(res)
		}
	}
	return nil
}

// watchTree watches dir and every folder under it.
func watchTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if err := w.Add(p); err != nil {
				return fmt.Errorf("watch %s: %w", p, err)
			}
		}
		return nil
	})
}

// Done is closed when the follower has stopped.
func (f *FolderFollower) Done() <-chan struct{} { return f.life.Done() }

// Close stops the follower and waits for it, at most until ctx is done. It
// returns the error that stopped it, nil for a clean stop.
func (f *FolderFollower) Close(ctx context.Context) error { return f.life.Close(ctx) }
