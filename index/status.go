package index

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// States of a note in note_status.
const (
	// StatusPending: the note is parked, waiting for chunks (or for a
	// revision whose size matches its text) that may still arrive.
	StatusPending = "pending"
	// StatusIncomplete: the note has been parked longer than the source's
	// bound; it stays unindexed (an older revision, if any, stays indexed)
	// until what it lacks arrives.
	StatusIncomplete = "incomplete"
	// StatusSkipped: the source does not index the document, for the
	// reason given (a binary attachment, outside the corpus, an unclean
	// path, unreadable); it is not retried until it changes.
	StatusSkipped = "skipped"
)

// NoteStatus is a note a source could not index (never partial text, so it
// is reported instead) or chose not to.
type NoteStatus struct {
	SourceID string // the source's id for the note (CouchDB _id)
	Path     string
	Rev      string
	State    string // StatusPending or StatusIncomplete
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
func (s *Store) SetNoteStatus(ctx context.Context, set []NoteStatus, clear []string) error {
	return s.writeStatus(ctx, "set note status", func(tx *sql.Tx) error {
		if err := deleteStatus(ctx, tx, clear); err != nil {
			return err
		}
		return upsertStatus(ctx, tx, set)
	})
}

// ReplaceNoteStatus makes note_status hold exactly set: what a full
// reconcile found unreadable. Rows for the same source id and revision keep
// their Since.
func (s *Store) ReplaceNoteStatus(ctx context.Context, set []NoteStatus) error {
	return s.writeStatus(ctx, "replace note status", func(tx *sql.Tx) error {
		keep := map[string]bool{}
		for _, st := range set {
			keep[st.SourceID] = true
		}
		rows, err := tx.QueryContext(ctx, `SELECT source_id FROM note_status`)
		if err != nil {
			return err
		}
		var stale []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			if !keep[id] {
				stale = append(stale, id)
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := deleteStatus(ctx, tx, stale); err != nil {
			return err
		}
		return upsertStatus(ctx, tx, set)
	})
}

func (s *Store) writeStatus(ctx context.Context, what string, fn func(*sql.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writer == nil {
		return ErrReadOnly
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
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
		if st.State != StatusPending && st.State != StatusIncomplete && st.State != StatusSkipped {
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
func (s *Store) NoteStatuses(ctx context.Context) ([]NoteStatus, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT source_id, path, rev, state, reason, since, updated_at FROM note_status ORDER BY path, source_id`)
	if err != nil {
		return nil, fmt.Errorf("list note status: %w", err)
	}
	defer rows.Close()
	var out []NoteStatus
	for rows.Next() {
		var st NoteStatus
		var since, updated int64
		if err := rows.Scan(&st.SourceID, &st.Path, &st.Rev, &st.State, &st.Reason, &since, &updated); err != nil {
			return nil, fmt.Errorf("list note status: %w", err)
		}
		st.Since, st.Updated = time.UnixMilli(since), time.UnixMilli(updated)
		out = append(out, st)
	}
	return out, rows.Err()
}
