package index

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/vaultask/vaultask/vault"
)

// NoteStatus is a note a source could not index (never partial text, so it
// is reported instead) or chose not to.
type NoteStatus struct {
	SourceID string // the source's id for the note (CouchDB _id)
	Path     string
	Rev      string
	State    string // StatusPending, StatusIncomplete or StatusSkipped
	Reason   string
	// Since is when this revision was first parked; a row kept for the same
	// revision keeps its first Since.
	Since   time.Time
	Updated time.Time
}

// SetNoteStatus records notes that could not be indexed and clears the rows
// of the source ids in clear (notes indexed or deleted since), in one
// transaction. A row for the same source id and revision keeps its Since; a
// new revision starts over.
func (f *Feed) SetNoteStatus(ctx context.Context, set []NoteStatus, clear []string) error {
	return f.db.write(ctx, "set note status", func(tx *writeTx) error {
		if err := deleteStatus(ctx, tx.Tx, clear); err != nil {
			return err
		}
		return upsertStatus(ctx, tx.Tx, set)
	})
}

// ReplaceNoteStatus makes note_status hold exactly set: what a full
// reconcile found unreadable. Rows for the same source id and revision keep
// their Since.
func (f *Feed) ReplaceNoteStatus(ctx context.Context, set []NoteStatus) error {
	return f.db.write(ctx, "replace note status", func(tx *writeTx) error {
		keep := map[string]bool{}
		for _, st := range set {
			keep[st.SourceID] = true
		}
		ids, err := queryAll(ctx, tx, one[string], `SELECT source_id FROM note_status`)
		if err != nil {
			return err
		}
		var stale []string
		for _, id := range ids {
			if !keep[id] {
				stale = append(stale, id)
			}
		}
		if err := deleteStatus(ctx, tx.Tx, stale); err != nil {
			return err
		}
		return upsertStatus(ctx, tx.Tx, set)
	})
}

func deleteStatus(ctx context.Context, tx *sql.Tx, ids []string) error {
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM note_status WHERE source_id = ?`, id); err != nil {
			return err
		}
	}
	return nil
}

func upsertStatus(ctx context.Context, tx *sql.Tx, set []NoteStatus) error {
	now := time.Now().UnixMilli()
	for _, st := range set {
		if st.State != vault.StatusPending && st.State != vault.StatusIncomplete && st.State != vault.StatusSkipped {
			return fmt.Errorf("%s: unknown state %q", st.Path, st.State)
		}
		since := st.Since
		if since.IsZero() {
			since = time.UnixMilli(now)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO note_status(source_id, path, rev, state, reason, since, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(source_id) DO UPDATE SET path = excluded.path, state = excluded.state, reason = excluded.reason,
				since = CASE WHEN rev = excluded.rev THEN min(since, excluded.since) ELSE excluded.since END,
				rev = excluded.rev, updated_at = excluded.updated_at`,
			st.SourceID, st.Path, st.Rev, st.State, st.Reason, since.UnixMilli(), now)
		if err != nil {
			return fmt.Errorf("%s: %w", st.Path, err)
		}
	}
	return nil
}

// NoteStatuses lists the notes that could not be indexed or were skipped,
// by path.
func (f *Feed) NoteStatuses(ctx context.Context) ([]NoteStatus, error) {
	type row struct {
		st             NoteStatus
		since, updated int64
	}
	rows, err := queryAll(ctx, f.db.reader, func(r *row) []any {
		return []any{&r.st.SourceID, &r.st.Path, &r.st.Rev, &r.st.State, &r.st.Reason, &r.since, &r.updated}
	}, `SELECT source_id, path, rev, state, reason, since, updated_at FROM note_status ORDER BY path, source_id`)
	if err != nil {
		return nil, fmt.Errorf("list note status: %w", err)
	}
	out := make([]NoteStatus, len(rows))
	for i, r := range rows {
		out[i] = r.st
		out[i].Since, out[i].Updated = time.UnixMilli(r.since), time.UnixMilli(r.updated)
	}
	return out, nil
}
