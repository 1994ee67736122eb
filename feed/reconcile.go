package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	kivik "github.com/go-kivik/kivik/v4"
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
	store *index.Store
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
func NewReconciler(c *Couch, store *index.Store) *Reconciler {
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

// Listing is the whole vault as one scan saw it.
type Listing struct {
	Since      string
	Identity   string
	Docs       int
	Notes      []vault.NoteInput
	Incomplete []index.NoteStatus
	Skipped    []index.NoteStatus
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
		if err := r.confirmMassRemoval(ctx, &l, &res); err != nil {
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
		if _, err := r.store.Apply(ctx, index.Batch{Source: r.couch.source, Checkpoint: l.Since, Identity: l.Identity}); err != nil {
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
	plan, err := r.store.Plan(ctx, l.Notes)
	if err != nil {
		return fatal(fmt.Errorf("reconcile: %w", err))
	}
	plan.Remove = withoutIncomplete(plan.Remove, l.Incomplete)
	if len(plan.Remove) == 0 {
		res.Plan = plan
		return nil
	}
	owners, err := r.store.SourcePaths(ctx)
	if err != nil {
		return fatal(fmt.Errorf("reconcile: %w", err))
	}
	idOf := make(map[string]string, len(owners))
	for id, p := range owners {
		idOf[vault.DocID(p)] = id
	}
	var ids []string
	for _, p := range plan.Remove {
		if id := idOf[vault.DocID(p)]; id != "" {
			ids = append(ids, id)
		}
	}
	raws, err := r.couch.fetch(ctx, ids)
	if err != nil {
		return fmt.Errorf("reconcile: confirm removals: %w", err)
	}
	var found []livesync.Doc
	for _, id := range ids {
		raw, ok := raws[id]
		if !ok {
			continue
		}
		doc, err := r.couch.dec.Decode(raw)
		if err != nil {
			if fatalDecode(err) {
				return fatal(r.couch.decodeError(err))
			}
			continue
		}
		if doc.Kind == livesync.KindNote && r.couch.indexable(doc.Note) && vault.DocID(doc.Note.Path) == vault.DocID(owners[id]) {
			found = append(found, doc)
		}
	}
	if len(found) == 0 {
		res.Plan = plan
		return nil
	}
	notes, incomplete, unreadable, err := r.read(ctx, found, newChunkCache(0))
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
	if plan, err = r.store.Plan(ctx, l.Notes); err != nil {
		return fatal(fmt.Errorf("reconcile: %w", err))
	}
	plan.Remove = withoutIncomplete(plan.Remove, l.Incomplete)
	res.Plan = plan
	return nil
}

// confirmMassRemoval lists the database a second time, ConfirmDelay later,
// when the plan would remove more than half of the indexed notes, and keeps
// only the removals both listings agree on; the second listing is the one
// written. Mass removals are warned of, with the count.
func (r *Reconciler) confirmMassRemoval(ctx context.Context, l *Listing, res *ReconcileResult) error {
	n, of := len(res.Plan.Remove), res.Plan.Indexed
	if 2*n <= of {
		return nil
	}
	r.log.Warn("a reconcile would remove more than half of the indexed notes; listing the database again to confirm",
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
		r.log.Warn("the database lists no notes at all: keeping the indexed notes until it does (to start over, delete the index file)",
			keyTotal, of, keyDB, r.couch.source)
		again.Plan.Remove = nil
	}
	*l, res.Since, res.Identity, res.Docs, res.Plan, res.Kept = second, again.Since, again.Identity, again.Docs, again.Plan, append(res.Kept, again.Kept...)
	if n := len(res.Plan.Remove); 2*n > of {
		r.log.Warn("removing more than half of the indexed notes: two listings agree they are gone", keyRemoved, n, keyTotal, of)
	}
	return nil
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
	writes := map[string]bool{}
	for _, ps := range [][]string{res.Plan.Add, res.Plan.Change, res.Plan.Touch} {
		for _, p := range ps {
			writes[vault.DocID(p)] = true
		}
	}
	var ids []string
	listed := map[string]vault.NoteInput{}
	for _, n := range l.Notes {
		if writes[vault.DocID(n.Path)] && n.SourceID != "" {
			ids = append(ids, n.SourceID)
			listed[n.SourceID] = n
		}
	}
	if len(ids) == 0 {
		return nil
	}
	revs, err := r.couch.currentRevs(ctx, ids)
	if err != nil {
		return fmt.Errorf("reconcile: recheck: %w", err)
	}
	var moved []string
	for _, id := range ids {
		if revs[id] != listed[id].Rev {
			moved = append(moved, id)
		}
	}
	if len(moved) == 0 {
		return nil
	}
	raws, err := r.couch.fetch(ctx, moved)
	if err != nil {
		return fmt.Errorf("reconcile: recheck: %w", err)
	}
	var fresh []livesync.Doc
	for _, id := range moved {
		raw, ok := raws[id]
		if !ok {
			continue // deleted since the listing: the follower removes it
		}
		doc, err := r.couch.dec.Decode(raw)
		if err != nil {
			if fatalDecode(err) {
				return fatal(r.couch.decodeError(err))
			}
			continue
		}
		if doc.Kind == livesync.KindNote && r.couch.indexable(doc.Note) && vault.DocID(doc.Note.Path) == vault.DocID(listed[id].Path) {
			fresh = append(fresh, doc)
		}
	}
	notes, incomplete, unreadable, err := r.read(ctx, fresh, newChunkCache(0))
	if err != nil {
		return err
	}
	l.Skipped = append(l.Skipped, unreadable...)
	drop := map[string]bool{}
	for _, id := range moved {
		drop[id] = true
	}
	kept := l.Notes[:0]
	for _, n := range l.Notes {
		if !drop[n.SourceID] {
			kept = append(kept, n)
		}
	}
	l.Notes = append(kept, notes...)
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

// List scans the whole database: every document through _all_docs in pages,
// chunks collected before any note is assembled, and the notes read into
// index input. Notes that can't be read whole are listed as incomplete.
func (r *Reconciler) List(ctx context.Context) (Listing, error) { return r.list(ctx, nil) }

// list is List, telling listed (when set) its progress after each page.
func (r *Reconciler) list(ctx context.Context, listed func(listed, total int)) (Listing, error) {
	var l Listing
	st, err := r.couch.state(ctx)
	if err != nil {
		return l, fmt.Errorf("reconcile: %w", err)
	}
	l.Since, l.Identity = st.UpdateSeq, st.Identity
	s := scan{r: r, chunks: newChunkCache(0), seen: map[string]bool{}, listed: listed}
	if err := s.allDocs(ctx); err != nil {
		return l, err
	}
	l.Docs = len(s.seen)
	winners := r.choose(s.notes)
	var unreadable []index.NoteStatus
	if l.Notes, l.Incomplete, unreadable, err = r.read(ctx, winners, s.chunks); err != nil {
		return l, err
	}
	l.Skipped = append(s.skipped, unreadable...)
	return l, nil
}

// scan is one pass over _all_docs.
type scan struct {
	r       *Reconciler
	chunks  *chunkCache
	notes   []livesync.Doc
	skipped []index.NoteStatus
	seen    map[string]bool
	listed  func(listed, total int)
}

func (s *scan) allDocs(ctx context.Context) error {
	page := max(s.r.PageSize, 2)
	total, last := -1, ""
	for {
		params := map[string]any{"include_docs": true, "limit": page}
		if last != "" {
			params["startkey"], params["skip"] = last, 1
		}
		rs := s.r.couch.db.AllDocs(ctx, kivik.Params(params))
		n := 0
		for rs.Next() {
			id, err := rs.ID()
			if err != nil {
				rs.Close()
				return fmt.Errorf("reconcile: list documents: %w", err)
			}
			var raw json.RawMessage
			if err := rs.ScanDoc(&raw); err != nil {
				rs.Close()
				return fmt.Errorf("reconcile: list documents: %s: %w", id, err)
			}
			n, last = n+1, id
			if err := s.take(id, raw); err != nil {
				rs.Close()
				return err
			}
		}
		if err := rs.Err(); err != nil {
			return fmt.Errorf("reconcile: list documents: %w", err)
		}
		if md, err := rs.Metadata(); err == nil && total < 0 {
			total = int(md.TotalRows)
		}
		if s.listed != nil {
			s.listed(len(s.seen), max(total, len(s.seen)))
		}
		if n < page {
			break
		}
	}
	if total > len(s.seen) {
		return s.complete(ctx, total)
	}
	return nil
}

// complete finds the documents _all_docs counted in total_rows but did not
// list (the test server's default key range ends at U+FFFF and drops ids
// outside the BMP) from the ids of _changes, and fetches them by key.
func (s *scan) complete(ctx context.Context, total int) error {
	s.r.log.Info("_all_docs listed fewer documents than it counts; completing the listing from _changes", keyCount, len(s.seen), keyTotal, total)
	ch := s.r.couch.db.Changes(ctx, kivik.Params(map[string]any{"since": "0"}))
	var ids []string
	for ch.Next() {
		if id := ch.ID(); id != "" && !ch.Deleted() && !s.seen[id] {
			ids = append(ids, id)
		}
	}
	if err := ch.Err(); err != nil {
		return fmt.Errorf("reconcile: list ids from _changes: %w", err)
	}
	ch.Close()
	raws, err := s.r.couch.fetch(ctx, ids)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	for _, id := range ids {
		if raw, ok := raws[id]; ok {
			if err := s.take(id, raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// take classifies one listed document.
func (s *scan) take(id string, raw json.RawMessage) error {
	s.seen[id] = true
	doc, err := s.r.couch.dec.Decode(raw)
	if err != nil {
		if fatalDecode(err) {
			return fatal(s.r.couch.decodeError(err))
		}
		s.r.log.Warn("skip malformed document", keyID, id, keyErr, err)
		if doc.Kind == livesync.KindNote {
			s.skipped = append(s.skipped, index.NoteStatus{SourceID: id, Path: id, Rev: doc.Rev, State: vault.StatusSkipped, Reason: "unreadable document: " + err.Error()})
		}
		return nil
	}
	switch doc.Kind {
	case livesync.KindChunk:
		s.chunks.put(doc.ID, doc.Data)
	case livesync.KindNote:
		if doc.Note.Deleted {
			break
		}
		if why := s.r.couch.skipReason(doc.Note); why != "" {
			s.skipped = append(s.skipped, index.NoteStatus{SourceID: doc.ID, Path: doc.Note.Path, Rev: doc.Rev, State: vault.StatusSkipped, Reason: why})
			break
		}
		s.notes = append(s.notes, doc)
	case livesync.KindSkip:
		if doc.Version > livesync.FormatVersion {
			s.r.couch.warnNewerFormat(doc.Version)
		}
	}
	return nil
}

// choose settles documents that claim one path (FORMAT.md §2, stale metadata
// after a case change): the document whose id LiveSync derives from the path
// wins, else the newest mtime, else the greatest id. Soft-deleted documents
// never reach here, so a stale deleted one cannot hide a live one.
func (r *Reconciler) choose(notes []livesync.Doc) []livesync.Doc {
	best := map[string]livesync.Doc{}
	for _, d := range notes {
		key := vault.DocID(d.Note.Path)
		cur, ok := best[key]
		if !ok || r.couch.prefer(d, cur) {
			best[key] = d
		}
	}
	out := make([]livesync.Doc, 0, len(best))
	for _, d := range best {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Note.Path < out[j].Note.Path })
	return out
}

// prefer reports whether a should index the path both claim rather than b.
func (c *Couch) prefer(a, b livesync.Doc) bool {
	aDerived, bDerived := c.derivedID(a.Note.Path) == a.ID, c.derivedID(b.Note.Path) == b.ID
	switch {
	case aDerived != bDerived:
		return aDerived
	case !a.Note.Mtime.Equal(b.Note.Mtime):
		return a.Note.Mtime.After(b.Note.Mtime)
	}
	return a.ID > b.ID
}

// read reassembles notes into index input; the ones that can't be read whole
// are returned as incomplete instead, and the unreadable ones as skipped.
func (r *Reconciler) read(ctx context.Context, docs []livesync.Doc, src *chunkCache) (out []vault.NoteInput, incomplete, unreadable []index.NoteStatus, err error) {
	notes := make([]*livesync.Note, len(docs))
	for i, d := range docs {
		notes[i] = d.Note
	}
	texts, errs, err := r.couch.readNotes(ctx, notes, src)
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

// waitable reports a note that is not readable yet: chunks not (or no
// longer) visible, or a size that does not match (written mid-way).
func waitable(err error) bool {
	return errors.Is(err, livesync.ErrMissingChunks) || errors.Is(err, livesync.ErrSizeMismatch)
}

// reason is the note_status text for a waitable error.
func reason(err error) string {
	var missing *livesync.MissingChunksError
	if errors.As(err, &missing) {
		return fmt.Sprintf("%d missing chunks: %s", len(missing.IDs), missing.IDs[0])
	}
	return "size mismatch: incomplete or mid-write"
}

func noteInput(d livesync.Doc, text string) vault.NoteInput {
	mtime := d.Note.Mtime
	if mtime.IsZero() {
		mtime = d.Note.Ctime
	}
	if mtime.IsZero() {
		mtime = time.UnixMilli(0)
	}
	return vault.NoteInput{Path: d.Note.Path, SourceID: d.ID, Rev: d.Rev, Text: text, MTime: mtime}
}
