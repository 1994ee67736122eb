package index

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/vaultask/vaultask/vault"
)

// Batch is what a source applies in one transaction: whole notes to upsert,
// notes to delete, and optionally the source's checkpoint that covers them.
type Batch struct {
	Upserts []vault.NoteInput
	Deletes []string // vault paths, any case

	// Source names the feed whose checkpoint is saved with the batch; the
	// checkpoint is stored only when Source is not empty.
	Source     string
	Checkpoint string
	// Identity, when not empty, is saved as what identifies the source's
	// database beside the checkpoint (see Feed.Checkpoint).
	Identity string
	// Sole, with Source, drops every other source's checkpoint with this
	// one: the batch ends a full sync that made the index the source's
	// copy, so a checkpoint of another source no longer describes it.
	Sole bool

	// Force re-chunks upserts even when rev and content are unchanged, as
	// `vaultask index --rebuild` does after the chunking rules change.
	Force bool

	// Expect makes the batch a compare-and-set against the index: a note
	// whose DocID is a key is written (upserted or deleted) only while the
	// index still holds the revision given ("" for no note at all). A full
	// sync plans from a listing of the source and an earlier read of the
	// index; whatever a follower applied since is newer than the listing,
	// and is kept. Notes not in Expect are written unconditionally.
	Expect map[string]string

	// linked, when not nil, collects the notes whose link text the batch
	// may have changed instead of refreshing it: a sync of many batches
	// refreshes each note once at its end (see Feed.Sync), where each
	// batch would rewrite a much-linked note's full-text rows again.
	linked map[string]bool
}

// ApplyResult counts what Apply did.
type ApplyResult struct {
	Added     int // notes new to the index
	Changed   int // notes whose text changed: re-chunked whole
	Touched   int // same text under a new revision: only the revision was updated
	Unchanged int // same revision and text: nothing written
	Deleted   int // notes removed
	Absent    int // deletes of notes the index did not hold
	// Stale counts upserts and deletes skipped because the index no longer
	// held the revision Batch.Expect named: something newer was applied
	// since the batch was planned.
	Stale int
	// Notes are the notes added, changed or removed, in the order written.
	Notes []NoteChange
}

// NoteChange is one note a write added, changed or removed: what a live
// view of the index shows.
type NoteChange struct {
	Change      string // ChangeAdded, ChangeChanged or ChangeRemoved
	Path        string
	Title       string
	Sensitivity string
	// WasSensitivity is, for ChangeChanged, the sensitivity the note had
	// before: a note that changed scope is new to, or gone from, a view of
	// open notes only. "" for the other changes.
	WasSensitivity string
}

// What a NoteChange did.
const (
	ChangeAdded   = "added"
	ChangeChanged = "changed"
	ChangeRemoved = "removed"
)

// Add sums two results.
func (r ApplyResult) Add(o ApplyResult) ApplyResult {
	return ApplyResult{
		Added: r.Added + o.Added, Changed: r.Changed + o.Changed, Touched: r.Touched + o.Touched,
		Unchanged: r.Unchanged + o.Unchanged, Deleted: r.Deleted + o.Deleted, Absent: r.Absent + o.Absent, Stale: r.Stale + o.Stale,
		Notes: append(slices.Clip(r.Notes), o.Notes...),
	}
}

// Written reports whether Apply changed any note.
func (r ApplyResult) Written() bool {
	return r.Added+r.Changed+r.Touched+r.Deleted > 0
}

// applier carries one Apply transaction. affected collects the link keys
// (names, path keys, aliases) whose resolution may have changed, linked the
// notes whose link text may have (see refreshLinkText).
type applier struct {
	s        *Store
	tx       *writeTx
	q        *stmtCache // the transaction's statements, each prepared once
	affected map[string]bool
	linked   map[string]bool
	resolved map[string]string // w.resolve's answers

	preludesChanged bool // refreshTopics re-queued chunks for embedding
}

func newApplier(s *Store, tx *writeTx) *applier {
	return &applier{s: s, tx: tx, q: newTxStmts(tx.Tx), affected: map[string]bool{}, linked: map[string]bool{}, resolved: map[string]string{}}
}

// contentHash is what Plan and upsert compare a note's text by.
func contentHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}
