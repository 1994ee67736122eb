package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// A source's checkpoint (feed_state) is written with the batch it covers,
// in the batch's transaction, so that a crash resumes exactly after what
// was written.

// saveCheckpoint stores the batch's checkpoint for its source, in the
// batch's transaction, so a crash resumes exactly after what was written.
// A batch that ends a full sync (Batch.Sole) drops every other source's
// checkpoint.
func saveCheckpoint(ctx context.Context, tx *sql.Tx, b Batch) error {
	if b.Source == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO feed_state(source, since, identity, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(source) DO UPDATE SET since = excluded.since, updated_at = excluded.updated_at,
			identity = CASE WHEN excluded.identity != '' THEN excluded.identity ELSE identity END`,
		b.Source, b.Checkpoint, b.Identity, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if b.Sole {
		if _, err := tx.ExecContext(ctx, `DELETE FROM feed_state WHERE source != ?`, b.Source); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	return nil
}

// FeedState is what the index keeps of a source: the sequence its
// checkpoint resumes from, and what identified the source's database when
// it was saved ("" when nothing was recorded): a database recreated under
// the same name has another identity, and the checkpoint means nothing
// there.
type FeedState struct {
	Since    string
	Identity string
}

// Checkpoint returns what the index keeps of source, and whether it keeps
// a checkpoint of it.
func (f *Feed) Checkpoint(ctx context.Context, source string) (FeedState, bool, error) {
	var st FeedState
	err := f.db.reader.QueryRowContext(ctx, `SELECT since, identity FROM feed_state WHERE source = ?`, source).Scan(&st.Since, &st.Identity)
	if errors.Is(err, sql.ErrNoRows) {
		return FeedState{}, false, nil
	}
	if err != nil {
		return FeedState{}, false, fmt.Errorf("read checkpoint %s: %w", source, err)
	}
	return st, true, nil
}

// AdoptCheckpoint gives source the checkpoint (sequence and identity) that
// the index keeps under another name, when source has none: of the names
// formerly reports true for, the one saved last. It returns that name, ""
// when nothing moved. A source that renames how it names itself keeps its
// checkpoint this way; whether the checkpoint still describes what the
// source reads is for the source to check.
func (f *Feed) AdoptCheckpoint(ctx context.Context, source string, formerly func(name string) bool) (string, error) {
	var from string
	err := f.db.write(ctx, "adopt checkpoint", func(tx *writeTx) error {
		names, err := queryAll(ctx, tx, one[string], `SELECT source FROM feed_state ORDER BY updated_at DESC, source`)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(names, formerly)
		if i < 0 || slices.Contains(names, source) {
			return nil
		}
		from = names[i]
		_, err = tx.ExecContext(ctx, `UPDATE feed_state SET source = ? WHERE source = ?`, source, from)
		return err
	})
	if err != nil {
		return "", err
	}
	return from, nil
}

// MarkRun records the time of a completed full index or reconcile run.
func (f *Feed) MarkRun(ctx context.Context, at time.Time) error {
	return f.db.write(ctx, "mark run", func(tx *writeTx) error {
		return setMeta(ctx, tx, lastRunMeta, at.UTC().Format(time.RFC3339))
	})
}

// LastRun is when the last full index or reconcile run completed
// (MarkRun), the zero time when none did. A value MarkRun did not write
// counts as none, so a reconcile is due at once.
func (f *Feed) LastRun(ctx context.Context) (time.Time, error) {
	v, _, err := getMeta(ctx, f.db.reader, lastRunMeta)
	if err != nil {
		return time.Time{}, err
	}
	at, _ := time.Parse(time.RFC3339, v)
	return at, nil
}
