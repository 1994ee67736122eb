package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/feed"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/transport"
	"github.com/vaultask/vaultask/vault"
)

// source is the vault as the commands use it: a LiveSync database or a
// folder of markdown. index, reconcile, follow and serve ask it for what
// they need; only openSource asks which kind it is.
type source interface {
	// list reads every note, for a dry run with no index to plan against.
	list(ctx context.Context) (listing, error)
	// plan is what sync would do to store (opened read-only), writing
	// nothing.
	plan(ctx context.Context, store *index.Feed) (dryRun, error)
	// sync makes store equal the source and writes its summary to out;
	// rebuild re-chunks every note.
	sync(ctx context.Context, store *index.Feed, rebuild bool, out io.Writer, start time.Time) error
	// follower keeps store equal to the source once opened, telling hooks
	// what it wrote.
	follower(store *index.Feed, hooks feedHooks) follower
	// check asks a LiveSync database now whether it can be read, saying
	// which setting to fix when it cannot; a follower does it itself.
	check(ctx context.Context) error
	// close lets go of the source's connection, if it has one.
	close() error
}

// follower is what keeps the index following the source: `vaultask
// follow` runs it alone, `vaultask serve` beside the API.
type follower interface {
	Open(ctx context.Context) error
	Done() <-chan struct{}
	Close(ctx context.Context) error
	// status fills in /status's feed and reconcile parts.
	status(st *transport.Status)
	// health is the connection's state, when the source has a connection.
	health() (feedHealth, bool)
}

// feedHealth is what the events tell of a follower's connection.
type feedHealth struct {
	connected, failing bool
	lastError          string
}

// feedHooks are what serve is told of a follower's writes; either may be
// nil.
type feedHooks struct {
	// notes is called after each write, with the feed's sequence when the
	// source has one.
	notes func(notes []index.NoteChange, seq string)
	// reconciled is called after each full reconcile of a LiveSync vault.
	reconciled func(feed.ReconcileResult)
}

// listing is every note of a source, and those it could not read whole.
type listing struct {
	notes      []vault.NoteInput
	incomplete []index.NoteStatus
}

// dryRun is what indexing the source would do.
type dryRun struct {
	plan         index.Plan
	reclassified index.Reclassified
	kept         []string // notes the listing missed but that are still there
	incomplete   []index.NoteStatus
}

// planAll is the dry run against no index at all: every note is new.
func planAll(l listing) dryRun {
	d := dryRun{incomplete: l.incomplete}
	for _, n := range l.notes {
		d.plan.Add = append(d.plan.Add, n.Path)
	}
	return d
}

// openSource opens the configured vault's source, checking now that a
// LiveSync database can be read; dir, when set, is a folder read instead
// (`index --from-dir`).
func openSource(ctx context.Context, cfg config.Config, log *slog.Logger, dir string) (source, error) {
	src, err := newSource(cfg, log, dir)
	if err != nil {
		return nil, err
	}
	if err := src.check(ctx); err != nil {
		src.close()
		return nil, err
	}
	return src, nil
}

// newSource is the configured vault's source (the folder dir instead, when
// set), asking a LiveSync database nothing yet: a follower (serve, follow)
// checks it itself and keeps trying while CouchDB is away or refuses, so
// only a setting that cannot work is an error here.
func newSource(cfg config.Config, log *slog.Logger, dir string) (source, error) {
	if dir == "" && cfg.Vault.Source != "folder" {
		couch, err := feed.NewCouch(couchOptions(cfg, log))
		switch {
		case errors.Is(err, feed.ErrNoDatabase):
			return nil, feedSetting(err)
		case err != nil:
			return nil, fmt.Errorf("%w: check vault.url (VAULTASK_VAULT__URL)", err)
		}
		return &couchSource{couch: couch, database: cfg.Vault.Database, reconcileEvery: cfg.Index.ReconcileInterval}, nil
	}
	if dir == "" {
		dir = cfg.Vault.Path
	}
	return &folderSource{dir: dir, corpus: corpusOf(cfg), log: log}, nil
}

func corpusOf(cfg config.Config) feed.Corpus {
	return feed.Corpus{Include: cfg.Corpus.Include, Exclude: cfg.Corpus.Exclude}
}

// folderSource is a folder of markdown files.
type folderSource struct {
	dir    string
	corpus feed.Corpus
	log    *slog.Logger
}

func (f *folderSource) list(context.Context) (listing, error) {
	l, err := feed.ScanFolder(f.dir, f.corpus)
	return listing{notes: l.Notes}, err
}

func (f *folderSource) plan(ctx context.Context, store *index.Feed) (dryRun, error) {
	var d dryRun
	l, err := feed.ScanFolder(f.dir, f.corpus)
	if err != nil {
		return d, err
	}
	if d.plan, err = store.Plan(ctx, l.Notes); err != nil {
		return d, err
	}
	d.reclassified, err = store.Reclassify(ctx, true)
	return d, err
}

func (f *folderSource) sync(ctx context.Context, store *index.Feed, rebuild bool, out io.Writer, start time.Time) error {
	l, res, err := feed.SyncFolder(ctx, store, f.dir, f.corpus, rebuild)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "indexed %d notes from %s in %s: %d added, %d changed, %d touched, %d unchanged, %d removed, %d reclassified\n",
		len(l.Notes), f.dir, time.Since(start).Round(time.Millisecond), res.Added, res.Changed, res.Touched, res.Unchanged, res.Deleted, len(res.Reclassified.Paths))
	for _, st := range l.Skipped {
		fmt.Fprintf(out, "skipped %q: %s\n", st.Path, st.Reason)
	}
	return nil
}

func (f *folderSource) follower(store *index.Feed, hooks feedHooks) follower {
	ff := feed.NewFolderFollower(f.dir, f.corpus, store, f.log)
	if hooks.notes != nil {
		ff.OnSync = func(res index.SyncResult) { hooks.notes(res.Notes, "") }
	}
	return folderFollower{ff}
}

func (f *folderSource) check(context.Context) error { return nil }

func (f *folderSource) close() error { return nil }

// folderFollower is a folder watch as serve reports it.
type folderFollower struct{ *feed.FolderFollower }

func (f folderFollower) status(st *transport.Status) {
	fs := f.Stats()
	st.Feed.Connected, st.Feed.CaughtUp, st.Feed.LastChangeAt, st.Feed.LastError = fs.CaughtUp, fs.CaughtUp, fs.LastChangeAt, fs.LastError
	if st.Feed.Failing = fs.LastError != ""; st.Feed.Failing {
		st.Feed.LastErrorAt = fs.LastSync
	}
	st.Reconcile.LastRun = fs.LastSync
}

// health: a folder has no connection to tell of.
func (f folderFollower) health() (feedHealth, bool) { return feedHealth{}, false }

// couchSource is an Obsidian LiveSync CouchDB database.
type couchSource struct {
	couch          *feed.Couch
	database       string
	reconcileEvery time.Duration
}

func (c *couchSource) list(ctx context.Context) (listing, error) {
	l, err := feed.NewReconciler(c.couch, nil).List(ctx)
	return listing{notes: l.Notes, incomplete: l.Incomplete}, err
}

func (c *couchSource) plan(ctx context.Context, store *index.Feed) (dryRun, error) {
	res, err := feed.NewReconciler(c.couch, store).Run(ctx, feed.ReconcileOptions{DryRun: true})
	return dryRun{plan: res.Plan, reclassified: res.Reclassified, kept: res.Kept, incomplete: res.Incomplete}, err
}

func (c *couchSource) sync(ctx context.Context, store *index.Feed, rebuild bool, out io.Writer, start time.Time) error {
	res, err := feed.NewReconciler(c.couch, store).Run(ctx, feed.ReconcileOptions{Force: rebuild})
	if err != nil {
		return err
	}
	s := res.Sync
	fmt.Fprintf(out, "indexed %d notes from couchdb database %s in %s: %d added, %d changed, %d touched, %d unchanged, %d removed, %d reclassified, %d incomplete\n",
		res.Notes, c.database, time.Since(start).Round(time.Millisecond), s.Added, s.Changed, s.Touched, s.Unchanged, s.Deleted, len(s.Reclassified.Paths), len(res.Incomplete))
	printIncomplete(out, res.Incomplete)
	return nil
}

func (c *couchSource) follower(store *index.Feed, hooks feedHooks) follower {
	opts := feed.FollowerOptions{ReconcileInterval: c.reconcileEvery, OnReconcile: hooks.reconciled}
	if hooks.notes != nil {
		opts.OnBatch = func(b feed.BatchResult) { hooks.notes(b.Notes, b.Checkpoint) }
	}
	return couchFollower{feed.NewFollower(c.couch, store, opts), c.database}
}

func (c *couchSource) check(ctx context.Context) error { return feedSetting(c.couch.Check(ctx)) }

func (c *couchSource) close() error { return c.couch.Close() }

// couchFollower is the LiveSync _changes follower as serve reports it.
type couchFollower struct {
	*feed.Follower
	database string
}

func (c couchFollower) status(st *transport.Status) {
	fs := c.Stats()
	f := &st.Feed
	f.Database = c.database
	f.Connected, f.CaughtUp, f.Resumed, f.LastSeq, f.UpdateSeq = fs.Connected, fs.CaughtUp, fs.Resumed, fs.Checkpoint, fs.UpdateSeq
	f.LastChangeAt, f.Scanning, f.ScanDone, f.ScanTotal = fs.LastChangeAt, fs.Scanning, fs.ScanDone, fs.ScanTotal
	f.ScanListed, f.ScanDocuments = fs.ScanListed, fs.ScanDocuments
	f.Failing, f.LastError, f.ErrorKind, f.LastErrorAt = fs.Failing, fs.LastError, fs.LastErrorKind, fs.LastErrorAt
	if lag, ok := seqLag(fs.UpdateSeq, fs.Checkpoint); ok {
		f.Lag = lag
	}
	r := fs.LastReconcile
	st.Reconcile = transport.ReconcileStatus{LastRun: r.At, NextRun: fs.NextReconcile, TookSeconds: r.Took.Seconds(), Notes: r.Notes,
		Added: r.Added, Changed: r.Changed, Removed: r.Removed, Incomplete: r.Incomplete, Skipped: r.Skipped}
}

func (c couchFollower) health() (feedHealth, bool) {
	fs := c.Stats()
	return feedHealth{connected: fs.Connected, failing: fs.Failing, lastError: fs.LastError}, true
}

func printIncomplete(out io.Writer, sts []index.NoteStatus) {
	for _, st := range sts {
		fmt.Fprintf(out, "incomplete %s (%s): not indexed\n", st.Path, st.Reason)
	}
}
