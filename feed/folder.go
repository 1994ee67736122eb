package feed

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/vaultask/vaultask/index"
)

// ScanFolder reads every note of a vault folder that corpus selects. Paths
// are vault-relative with forward slashes; a note's revision is its
// modification time, so a touched file is a new revision of the same text.
func ScanFolder(dir string, corpus index.Corpus) ([]index.NoteInput, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("vault folder %s: not a readable directory", dir)
	}
	var notes []index.NoteInput
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
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
			return err
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		notes = append(notes, index.NoteInput{
			Path:  rel,
			Rev:   strconv.FormatInt(info.ModTime().UnixNano(), 10),
			Text:  string(text),
			MTime: info.ModTime(),
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan vault folder %s: %w", dir, err)
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].Path < notes[j].Path })
	return notes, nil
}

// FolderFollower indexes a plain vault folder and keeps it indexed: file
// system events, debounced, trigger a rescan whose diff is applied as a
// reconcile does (changed notes re-indexed, deleted ones removed). It is the
// small second source for vaults without LiveSync.
type FolderFollower struct {
	dir    string
	corpus index.Corpus
	store  *index.Store
	log    *slog.Logger
	// Debounce is how long the folder must be quiet before a rescan.
	// Default 500ms.
	Debounce time.Duration

	loop
}

// NewFolderFollower returns a follower of the folder dir; Open starts it.
func NewFolderFollower(dir string, corpus index.Corpus, store *index.Store, log *slog.Logger) *FolderFollower {
	if log == nil {
		log = slog.Default()
	}
	return &FolderFollower{dir: dir, corpus: corpus, store: store, log: log.With(logComponent, "feed"), Debounce: 500 * time.Millisecond}
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
	err = f.spawn(ctx, func(ctx context.Context) error {
		defer w.Close()
		return f.run(ctx, w)
	})
	if err != nil {
		w.Close()
	}
	return err
}

func (f *FolderFollower) run(ctx context.Context, w *fsnotify.Watcher) error {
	if err := f.sync(ctx); err != nil {
		return err
	}
	var quiet <-chan time.Time
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
			if err := f.sync(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// sync makes the index equal the folder.
func (f *FolderFollower) sync(ctx context.Context) error {
	listing, err := ScanFolder(f.dir, f.corpus)
	if err != nil {
		return err
	}
	plan, err := f.store.Plan(ctx, listing)
	if err != nil {
		return err
	}
	if len(plan.Add)+len(plan.Change)+len(plan.Touch)+len(plan.Remove) == 0 {
		return nil
	}
	res, err := f.store.Sync(ctx, listing, plan, false)
	if err != nil {
		return err
	}
	f.log.Info("vault folder indexed", keyPath, f.dir, keyAdded, res.Added, keyChanged, res.Changed, keyRemoved, res.Deleted)
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
