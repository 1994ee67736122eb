package feed

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/internal/retry"
	"github.com/vaultask/vaultask/vault"
)

// Reconciler makes the index equal the LiveSync database: it lists every
// document with _all_docs in pages, diffs the notes against the index by
// (rev, content hash), re-indexes what changed, removes what is gone or
// soft-deleted (each removal confirmed by a keys lookup first) and
// recomputes every note's sensitivity. It catches whatever a follower missed
// and is the first full scan of an empty index.
type Reconciler struct {
	couch *Couch
	store *index.Feed
	log   *slog.Logger
	// PageSize is the number of documents per _all_docs request.
	PageSize int
	// ConfirmDelay is how long a reconcile that would remove more than
	// half of the indexed notes waits before listing the database again:
	// only removals both listings agree on are made. A database that was
	// just recreated, or one a client is still uploading to, looks like a
	// vault whose notes were all deleted.
	ConfirmDelay time.Duration
	// Clock waits out ConfirmDelay; tests replace it.
	Clock retry.Clock
	// WriteBatch is the notes of one transaction; zero takes the index's
	// default.
	WriteBatch int
}

// NewReconciler returns a Reconciler of the database c into store; store may
// be read-only for a dry run.
func NewReconciler(c *Couch, store *index.Feed) *Reconciler {
	return &Reconciler{couch: c, store: store, log: c.log, PageSize: 1000, ConfirmDelay: 15 * time.Second, Clock: retry.System}
}

// ReconcileOptions change what Run writes.
type ReconcileOptions struct {
	// DryRun computes and returns the plan and writes nothing.
	DryRun bool
	// Force re-chunks every note, changed or not (`index --rebuild`).
	Force bool
	// ResetCheckpoint saves the scan's starting sequence as the feed's
	// checkpoint even when one exists: the server rejected the old one.
	ResetCheckpoint bool
	// AwaitNotes makes a database that lists no notes at all, while the
	// index holds some, an *emptyDatabaseError that writes nothing, rather
	// than a reconcile that keeps the index and completes: a follower's
	// database recreated under it, still being uploaded, is reconciled
	// again until notes appear. A first scan leaves it unset: it must end,
	// with its checkpoint, even on an empty database.
	AwaitNotes bool
	// Progress, when set, is told how many of the listed notes are written:
	// 0 of them once listed, then after each transaction. Listed is told,
	// after each _all_docs page, how many documents are listed of the
	// database's total_rows.
	Progress func(done, total int)
	Listed   func(listed, total int)
}

// ReconcileResult is what a reconcile found and did.
type ReconcileResult struct {
	// Since is the database's sequence read before the scan: following
	// _changes from it misses nothing the scan did not see.
	Since string
	// Identity is the database's identity at the scan (dbState.Identity),
	// saved with the checkpoint.
	Identity string
	// Docs is the number of documents listed; Notes the indexable notes.
	Docs, Notes int
	// Plan is the diff against the index; Plan.Remove holds only removals
	// a keys lookup confirmed.
	Plan index.Plan
	// Kept are indexed notes _all_docs did not list but a keys lookup found
	// alive (a server whose default key range drops some ids); they are
	// kept and re-read, not removed.
	Kept []string
	// Incomplete are notes that could not be read whole (missing chunks, or
	// a size that does not match the text): never indexed with partial
	// text. An older revision already indexed stays.
	Incomplete []index.NoteStatus
	// Skipped are the documents of notes not indexed, with the reason.
	Skipped []index.NoteStatus
	// Sync is what the writes did; zero for a dry run.
	Sync index.SyncResult
	// Reclassified are the notes whose sensitivity changed (or would).
	Reclassified index.Reclassified
}

// Run reconciles the index with the database. Unless DryRun, it also saves
// the scan's starting sequence as the checkpoint when the index has none (or
// ResetCheckpoint), so a follower continues from there, and records the run.
func (r *Reconciler) Run(ctx context.Context, opts ReconcileOptions) (ReconcileResult, error) {
	started := time.Now()
	l, err := r.list(ctx, opts.Listed)
	if err != nil {
		return ReconcileResult{}, err
	}
	res := ReconcileResult{Since: l.Since, Identity: l.Identity, Docs: l.Docs}
	if err := r.plan(ctx, &l, &res); err != nil {
		return res, err
	}
	if !opts.DryRun {
		if err := r.recheck(ctx, &l, &res); err != nil {
			return res, err
		}
		if err := r.confirmMassRemoval(ctx, &l, &res, opts.AwaitNotes); err != nil {
			return res, err
		}
	}
	res.Notes, res.Incomplete, res.Skipped = len(l.Notes), l.Incomplete, l.Skipped
	if opts.DryRun {
		if res.Reclassified, err = r.store.Reclassify(ctx, true); err != nil {
			return res, fatal(fmt.Errorf("reconcile: %w", err))
		}
		return res, nil
	}
	if res.Sync, err = r.store.Sync(ctx, l.Notes, res.Plan, index.SyncOptions{Force: opts.Force, Progress: opts.Progress, BatchSize: r.WriteBatch}); err != nil {
		return res, fatal(fmt.Errorf("reconcile: %w", err))
	}
	res.Reclassified = res.Sync.Reclassified
	if err := r.store.ReplaceNoteStatus(ctx, slices.Concat(l.Incomplete, l.Skipped)); err != nil {
		return res, fatal(fmt.Errorf("reconcile: %w", err))
	}
	_, ok, err := r.store.Checkpoint(ctx, r.couch.source)
	if err != nil {
		return res, fatal(fmt.Errorf("reconcile: %w", err))
	}
	if !ok || opts.ResetCheckpoint {
		// The index is now this database's copy: a checkpoint of another
		// database (one followed before under another name) goes.
		if _, err := r.store.Apply(ctx, index.Batch{Source: r.couch.source, Checkpoint: l.Since, Identity: l.Identity, Sole: true}); err != nil {
			return res, fatal(fmt.Errorf("reconcile: save checkpoint: %w", err))
		}
	}
	if err := r.store.MarkRun(ctx, time.Now()); err != nil {
		return res, fatal(fmt.Errorf("reconcile: %w", err))
	}
	r.log.Info("reconciled", keyCount, res.Notes, keyAdded, res.Sync.Added, keyChanged, res.Sync.Changed,
		keyRemoved, res.Sync.Deleted, keyIncomplete, len(res.Incomplete), keySeq, res.Since, keyElapsed, time.Since(started).Round(time.Millisecond))
	return res, nil
}

// plan diffs the listing against the index and confirms each removal by
// key: a note the listing lacks but the database still holds alive is read
// and kept. Notes that could not be read are not removed either.
func (r *Reconciler) plan(ctx context.Context, l *Listing, res *ReconcileResult) error {
	plan, err := r.diff(ctx, l)
	if err != nil {
		return err
	}
	if len(plan.Remove) == 0 {
		res.Plan = plan
		return nil
	}
	alive, err := r.alive(ctx, plan.Remove)
	if err != nil {
		return err
	}
	if len(alive) == 0 {
		res.Plan = plan
		return nil
	}
	notes, incomplete, unreadable, err := r.read(ctx, alive, newChunkCache(0))
	if err != nil {
		return err
	}
	l.Skipped = append(l.Skipped, unreadable...)
	for _, n := range notes {
		res.Kept = append(res.Kept, n.Path)
		r.log.Warn("_all_docs did not list a live note; a keys lookup found it, so it is kept", keyPath, n.Path)
	}
	l.Notes = append(l.Notes, notes...)
	l.Incomplete = append(l.Incomplete, incomplete...)
	if plan, err = r.diff(ctx, l); err != nil {
		return err
	}
	res.Plan = plan
	return nil
}

// diff is the plan that makes the index equal the listing, without removing
// the notes the listing could not read whole.
func (r *Reconciler) diff(ctx context.Context, l *Listing) (index.Plan, error) {
	plan, err := r.store.Plan(ctx, l.Notes)
	if err != nil {
		return plan, fatal(fmt.Errorf("reconcile: %w", err))
	}
	plan.Remove = withoutIncomplete(plan.Remove, l.Incomplete)
	return plan, nil
}

// alive looks up by key the indexed notes at the paths of remove and
// returns those the database still holds alive at the same path.
func (r *Reconciler) alive(ctx context.Context, remove []string) ([]livesync.Doc, error) {
	owners, err := r.store.SourcePaths(ctx)
	if err != nil {
		return nil, fatal(fmt.Errorf("reconcile: %w", err))
	}
	idOf := make(map[string]string, len(owners))
	for id, p := range owners {
		idOf[vault.DocID(p)] = id
	}
	var ids []string
	for _, p := range remove {
		if id := idOf[vault.DocID(p)]; id != "" {
			ids = append(ids, id)
		}
	}
	return r.reread(ctx, "confirm removals", ids, owners)
}

// confirmMassRemoval lists the database a second time, ConfirmDelay later,
// when the plan would remove more than half of the indexed notes, and keeps
// only the removals both listings agree on; the second listing is the one
// written. Mass removals are warned of, with the count. A second listing
// with no notes at all removes nothing, and with awaitNotes is an
// *emptyDatabaseError.
func (r *Reconciler) confirmMassRemoval(ctx context.Context, l *Listing, res *ReconcileResult, awaitNotes bool) error {
	n, of := len(res.Plan.Remove), res.Plan.Indexed
	if 2*n <= of {
		return nil
	}
	level := slog.LevelWarn
	if awaitNotes && len(l.Notes)+len(l.Incomplete) == 0 {
		level = slog.LevelDebug // a database waited out: its failure is warned of once
	}
	r.log.Log(ctx, level, "a reconcile would remove more than half of the indexed notes; listing the database again to confirm",
		keyRemoved, n, keyTotal, of, keyWait, r.ConfirmDelay)
	if err := r.Clock.Sleep(ctx, r.ConfirmDelay); err != nil {
		return err
	}
	second, err := r.List(ctx)
	if err != nil {
		return err
	}
	again := ReconcileResult{Since: second.Since, Identity: second.Identity, Docs: second.Docs}
	if err := r.plan(ctx, &second, &again); err != nil {
		return err
	}
	if err := r.recheck(ctx, &second, &again); err != nil {
		return err
	}
	again.Plan.Remove = intersect(again.Plan.Remove, res.Plan.Remove)
	if len(second.Notes)+len(second.Incomplete) == 0 {
		// No vault has no notes at all: this is a database being rebuilt,
		// or the wrong one. The index is kept until notes appear.
		if awaitNotes {
			return &emptyDatabaseError{database: r.couch.database(), indexed: of}
		}
		r.log.Warn("the database lists no notes at all: keeping the indexed notes until it does (to start over, delete the index file)",
			keyTotal, of, keyDB, r.couch.url)
		again.Plan.Remove = nil
	}
	*l, res.Since, res.Identity, res.Docs, res.Plan, res.Kept = second, again.Since, again.Identity, again.Docs, again.Plan, append(res.Kept, again.Kept...)
	if n := len(res.Plan.Remove); 2*n > of {
		r.log.Warn("removing more than half of the indexed notes: two listings agree they are gone", keyRemoved, n, keyTotal, of)
	}
	return nil
}

// emptyDatabaseError is a reconcile that found a database listing no notes
// at all, twice, while the index holds some, and wrote nothing.
type emptyDatabaseError struct {
	database string
	indexed  int
}

func (e *emptyDatabaseError) Error() string {
	return fmt.Sprintf("database %q lists no notes at all: the %d indexed notes are kept until it does (is LiveSync rebuilding it? To start over, delete the index file)", e.database, e.indexed)
}

// recheck re-reads, just before the writes, the notes the plan would write
// whose documents changed since the listing: the listing is a snapshot that
// may be older than the index (a follower applied a newer revision, or a
// delete, while the scan ran), and writing it as it is would put an older
// revision back or bring a deleted note back. Nothing changed when the
// database's sequence did not move.
func (r *Reconciler) recheck(ctx context.Context, l *Listing, res *ReconcileResult) error {
	now, err := r.couch.updateSeq(ctx)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	if now == l.Since {
		return nil
	}
	moved, err := r.moved(ctx, l.Notes, res.Plan)
	if err != nil || len(moved) == 0 {
		return err
	}
	ids, paths := make([]string, len(moved)), make(map[string]string, len(moved))
	for i, n := range moved {
		ids[i], paths[n.SourceID] = n.SourceID, n.Path
	}
	fresh, err := r.reread(ctx, "recheck", ids, paths)
	if err != nil {
		return err
	}
	notes, incomplete, unreadable, err := r.read(ctx, fresh, newChunkCache(0))
	if err != nil {
		return err
	}
	l.Skipped = append(l.Skipped, unreadable...)
	l.Notes = append(withoutSources(l.Notes, paths), notes...)
	l.Incomplete = append(l.Incomplete, incomplete...)
	r.log.Info("re-read notes that changed while the database was listed", keyCount, len(moved))
	confirmed := res.Plan.Remove
	if res.Plan, err = r.store.Plan(ctx, l.Notes); err != nil {
		return fatal(fmt.Errorf("reconcile: %w", err))
	}
	// Only removals already confirmed stand; a note deleted since the
	// listing is removed by the follower, which saw the delete.
	res.Plan.Remove = intersect(res.Plan.Remove, confirmed)
	return nil
}

// moved returns the listed notes the plan would write whose documents'
// current revision is not the listed one (or that are gone).
func (r *Reconciler) moved(ctx context.Context, listed []vault.NoteInput, plan index.Plan) ([]vault.NoteInput, error) {
	writes := map[string]bool{}
	for _, ps := range [][]string{plan.Add, plan.Change, plan.Touch} {
		for _, p := range ps {
			writes[vault.DocID(p)] = true
		}
	}
	var ids []string
	var written []vault.NoteInput
	for _, n := range listed {
		if writes[vault.DocID(n.Path)] && n.SourceID != "" {
			ids = append(ids, n.SourceID)
			written = append(written, n)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	revs, err := r.couch.currentRevs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("reconcile: recheck: %w", err)
	}
	var moved []vault.NoteInput
	for _, n := range written {
		if revs[n.SourceID] != n.Rev {
			moved = append(moved, n)
		}
	}
	return moved, nil
}

// reread fetches the documents ids by key and returns the live indexable
// notes among them that are still at the path paths holds for their id.
// Documents gone since are left out: the follower removes them. what names
// the step in errors.
func (r *Reconciler) reread(ctx context.Context, what string, ids []string, paths map[string]string) ([]livesync.Doc, error) {
	raws, err := r.couch.fetch(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %s: %w", what, err)
	}
	var docs []livesync.Doc
	for _, id := range ids {
		raw, ok := raws[id]
		if !ok {
			continue
		}
		doc, err := r.couch.dec.Decode(raw)
		if err != nil {
			if fatalDecode(err) {
				return nil, fatal(r.couch.decodeError(err))
			}
			continue
		}
		if doc.Kind == livesync.KindNote && r.couch.indexable(doc.Note) && vault.DocID(doc.Note.Path) == vault.DocID(paths[id]) {
			docs = append(docs, doc)
		}
	}
	return docs, nil
}

// withoutSources keeps the notes whose documents are not in drop (by _id).
func withoutSources(notes []vault.NoteInput, drop map[string]string) []vault.NoteInput {
	kept := notes[:0]
	for _, n := range notes {
		if _, ok := drop[n.SourceID]; !ok {
			kept = append(kept, n)
		}
	}
	return kept
}

// intersect keeps the paths of a that are also in b.
func intersect(a, b []string) []string {
	in := map[string]bool{}
	for _, p := range b {
		in[vault.DocID(p)] = true
	}
	var out []string
	for _, p := range a {
		if in[vault.DocID(p)] {
			out = append(out, p)
		}
	}
	return out
}

func withoutIncomplete(remove []string, incomplete []index.NoteStatus) []string {
	held := map[string]bool{}
	for _, st := range incomplete {
		held[vault.DocID(st.Path)] = true
	}
	var out []string
	for _, p := range remove {
		if !held[vault.DocID(p)] {
			out = append(out, p)
		}
	}
	return out
}

// read reassembles notes into index input; the ones that can't be read whole
// are returned as incomplete instead, and the unreadable ones as skipped.
func (r *Reconciler) read(ctx context.Context, docs []livesync.Doc, src *chunkCache) (out []vault.NoteInput, incomplete, unreadable []index.NoteStatus, err error) {
	texts, errs, err := r.couch.readNotes(ctx, notesOf(docs), src)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reconcile: %w", err)
	}
	for i, d := range docs {
		if errs[i] != nil {
			if !waitable(errs[i]) {
				r.log.Warn("note unreadable: not indexed", keyPath, d.Note.Path, keyRev, d.Rev, keyErr, errs[i])
				unreadable = append(unreadable, index.NoteStatus{SourceID: d.ID, Path: d.Note.Path, Rev: d.Rev, State: vault.StatusSkipped, Reason: "unreadable: " + errs[i].Error()})
				continue
			}
			r.log.Warn("note incomplete: not indexed", keyPath, d.Note.Path, keyRev, d.Rev, keyReason, errs[i])
			incomplete = append(incomplete, index.NoteStatus{SourceID: d.ID, Path: d.Note.Path, Rev: d.Rev, State: vault.StatusIncomplete, Reason: reason(errs[i])})
			continue
		}
		out = append(out, noteInput(d, texts[i]))
	}
	return out, incomplete, unreadable, nil
}
