package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"

	"github.com/vaultask/vaultask/index/vectorset"
	"github.com/vaultask/vaultask/vault"
)

// Apply writes a batch in one transaction: deletes, then upserts (each note's
// chunks, FTS rows, vectors, aliases and outgoing edges replaced whole), then
// link resolution for everything the batch touched, then the checkpoint. A
// reader sees either none of it or all of it.
func (f *Feed) Apply(ctx context.Context, b Batch) (ApplyResult, error) {
	var res ApplyResult
	var w *applier
	err := f.db.write(ctx, "apply", func(tx *writeTx) error {
		w = newApplier(f.db, tx)
		for _, p := range b.Deletes {
			if err := w.applyDelete(ctx, b.Expect, p, &res); err != nil {
				return fmt.Errorf("delete %s: %w", p, err)
			}
		}
		for _, n := range b.Upserts {
			if err := w.applyUpsert(ctx, b, n, &res); err != nil {
				return fmt.Errorf("%s: %w", n.Path, err)
			}
		}
		if err := w.relink(ctx, tx.Tx, b.linked); err != nil {
			return err
		}
		return saveCheckpoint(ctx, tx.Tx, b)
	})
	if err != nil {
		return res, err
	}
	if res.Added+res.Changed > 0 || w.preludesChanged {
		f.db.signalChanged()
	}
	return res, nil
}

// applyDelete removes the note at path unless Expect says the index holds
// a newer one, and counts what it did in res.
func (w *applier) applyDelete(ctx context.Context, expect map[string]string, path string, res *ApplyResult) error {
	docID := vault.DocID(path)
	ok, err := w.expected(ctx, expect, docID)
	if err != nil {
		return err
	}
	if !ok {
		res.Stale++
		return nil
	}
	before, err := w.noteChange(ctx, docID, ChangeRemoved)
	if err != nil {
		return err
	}
	gone, err := w.deleteDoc(ctx, docID)
	if err != nil {
		return err
	}
	if gone {
		res.Deleted++
		res.Notes = append(res.Notes, before)
	} else {
		res.Absent++
	}
	return nil
}

// applyUpsert writes n unless b.Expect says the index holds a newer
// revision, and counts what it did in res.
func (w *applier) applyUpsert(ctx context.Context, b Batch, n vault.NoteInput, res *ApplyResult) error {
	docID := vault.DocID(n.Path)
	ok, err := w.expected(ctx, b.Expect, docID)
	if err != nil {
		return err
	}
	if !ok {
		res.Stale++
		return nil
	}
	outcome, was, err := w.upsert(ctx, n, b.Force)
	if err != nil {
		return err
	}
	kind := ChangeAdded
	switch outcome {
	case outcomeAdded:
		res.Added++
	case outcomeChanged:
		res.Changed++
		kind = ChangeChanged
	case outcomeTouched:
		res.Touched++
		return nil
	default:
		res.Unchanged++
		return nil
	}
	after, err := w.noteChange(ctx, docID, kind)
	if err != nil {
		return err
	}
	if kind == ChangeChanged {
		after.WasSensitivity = was
	}
	res.Notes = append(res.Notes, after)
	return nil
}

// relink resolves again the links the batch's notes may have changed, and
// their topics, then refreshes the link text of the notes marked; or, in a
// sync (linked not nil), hands them to the sync's end instead.
func (w *applier) relink(ctx context.Context, tx *sql.Tx, linked map[string]bool) error {
	if len(w.affected) > 0 {
		if err := w.resolvePending(ctx); err != nil {
			return fmt.Errorf("resolve links: %w", err)
		}
		if err := w.refreshTopics(ctx); err != nil {
			return fmt.Errorf("topics: %w", err)
		}
	}
	if linked == nil {
		if err := w.refreshLinkText(ctx); err != nil {
			return fmt.Errorf("link text: %w", err)
		}
		return nil
	}
	// Marked but not refreshed yet: until the sync's end says so, the
	// index's link text is not done (see Feed.Sync).
	if len(w.linked) > 0 {
		if err := deleteMeta(ctx, tx, linkTextMeta); err != nil {
			return err
		}
	}
	maps.Copy(linked, w.linked)
	clear(w.linked)
	return nil
}

// noteChange describes the indexed note docID for ApplyResult.Notes.
func (w *applier) noteChange(ctx context.Context, docID, kind string) (NoteChange, error) {
	c := NoteChange{Change: kind}
	err := w.q.QueryRowContext(ctx, `SELECT path, title, sensitivity FROM docs WHERE doc_id = ?`, docID).Scan(&c.Path, &c.Title, &c.Sensitivity)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	return c, err
}

type outcome int

const (
	outcomeUnchanged outcome = iota
	outcomeTouched
	outcomeChanged
	outcomeAdded
)

// markTargets marks the notes docID links to: their link text holds what
// docID says about them, under docID's sensitivity.
func (w *applier) markTargets(ctx context.Context, docID string) error {
	dsts, err := queryAll(ctx, w.q, one[string], `SELECT DISTINCT dst FROM edges WHERE src = ? AND dst IS NOT NULL AND kind != 'tag'`, docID)
	for _, d := range dsts {
		w.linked[d] = true
	}
	return err
}

// expected reports whether the index holds the revision expect names for
// docID (no note for ""), or expect does not name docID at all.
func (w *applier) expected(ctx context.Context, expect map[string]string, docID string) (bool, error) {
	want, conditional := expect[docID]
	if !conditional {
		return true, nil
	}
	var rev string
	err := w.q.QueryRowContext(ctx, `SELECT rev FROM docs WHERE doc_id = ?`, docID).Scan(&rev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	return rev == want, nil
}

func (w *applier) markAffected(ctx context.Context, docID string) error {
	var p string
	err := w.q.QueryRowContext(ctx, `SELECT path FROM docs WHERE doc_id = ?`, docID).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	w.affected[noteName(p)] = true
	aliases, err := queryAll(ctx, w.q, one[string], `SELECT alias FROM aliases WHERE doc_id = ?`, docID)
	for _, a := range aliases {
		w.affected[a] = true
	}
	return err
}

// deleteDoc removes a note and every trace of it: chunks (with their FTS rows
// via trigger, and vectors), aliases, outgoing edges (cascade) and incoming
// edges, which become unresolved links.
func (w *applier) deleteDoc(ctx context.Context, docID string) (bool, error) {
	if err := w.markAffected(ctx, docID); err != nil {
		return false, err
	}
	if err := w.markTargets(ctx, docID); err != nil {
		return false, err
	}
	if err := w.deleteVectors(ctx, docID); err != nil {
		return false, err
	}
	r, err := w.q.ExecContext(ctx, `DELETE FROM docs WHERE doc_id = ?`, docID)
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, err
	}
	if _, err := w.q.ExecContext(ctx, `UPDATE edges SET dst = NULL, resolved = 0 WHERE dst = ? AND kind != 'tag'`, docID); err != nil {
		return false, err
	}
	return n > 0, nil
}

// upsert writes n as its outcome says, and returns the sensitivity the
// note had before ("" when it is new).
func (w *applier) upsert(ctx context.Context, n vault.NoteInput, force bool) (_ outcome, was string, err error) {
	if clean, err := vault.CleanPath(n.Path); err != nil || clean != n.Path {
		// Sources clean paths (and skip what cannot be cleaned) before
		// this: a note that gets here unclean is a source's bug.
		return 0, "", fmt.Errorf("%w: %q (want %q, %v)", vault.ErrUncleanPath, n.Path, clean, err)
	}
	docID := vault.DocID(n.Path)
	hash := contentHash(n.Text)
	var oldRev, oldHash, oldPath string
	err = w.q.QueryRowContext(ctx, `SELECT rev, content_hash, path, sensitivity FROM docs WHERE doc_id = ?`, docID).Scan(&oldRev, &oldHash, &oldPath, &was)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, "", err
	}
	if exists && !force && oldHash == hash && oldPath == n.Path {
		if oldRev == n.Rev {
			return outcomeUnchanged, was, nil
		}
		_, err := w.q.ExecContext(ctx, `UPDATE docs SET rev = ?, mtime = ?, source_id = ? WHERE doc_id = ?`, n.Rev, n.MTime.UnixMilli(), n.SourceID, docID)
		return outcomeTouched, was, err
	}
	if exists {
		if err := w.markAffected(ctx, docID); err != nil {
			return 0, "", err
		}
		if err := w.markTargets(ctx, docID); err != nil {
			return 0, "", err
		}
		if err := w.deleteVectors(ctx, docID); err != nil {
			return 0, "", err
		}
		for _, q := range []string{`DELETE FROM chunks WHERE doc_id = ?`, `DELETE FROM edges WHERE src = ?`, `DELETE FROM aliases WHERE doc_id = ?`} {
			if _, err := w.q.ExecContext(ctx, q, docID); err != nil {
				return 0, "", err
			}
		}
	}
	if err := w.insert(ctx, docID, hash, n); err != nil {
		return 0, "", err
	}
	if exists {
		return outcomeChanged, was, nil
	}
	return outcomeAdded, "", nil
}

// deleteVectors removes the vectors of a note's chunks in every space.
func (w *applier) deleteVectors(ctx context.Context, docID string) error {
	type gone struct{ space, chunk int64 }
	deleted, err := queryAll(ctx, w.q, func(g *gone) []any { return []any{&g.space, &g.chunk} },
		`DELETE FROM vectors WHERE space IN (SELECT id FROM spaces) AND chunk IN (SELECT rowid FROM chunks WHERE doc_id = ?)
		RETURNING space, chunk`, docID)
	if err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	for _, g := range deleted {
		w.tx.recordVector(spaceChange{g.space, vectorset.Change{ID: g.chunk, Dropped: true}})
	}
	return nil
}
