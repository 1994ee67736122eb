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

// Checkpoint returns the saved sequence of source, and whether one exists.
func (s *Store) Checkpoint(ctx context.Context, source string) (string, bool, error) {
	var since string
	err := s.reader.QueryRowContext(ctx, `SELECT since FROM feed_state WHERE source = ?`, source).Scan(&since)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read checkpoint %s: %w", source, err)
	}
	return since, true, nil
}

// FeedIdentity returns what identified source's database when its checkpoint
// was saved ("" when nothing was recorded): a database recreated under the
// same name has another identity, and the checkpoint means nothing there.
func (s *Store) FeedIdentity(ctx context.Context, source string) (string, error) {
	var id string
	err := s.reader.QueryRowContext(ctx, `SELECT identity FROM feed_state WHERE source = ?`, source).Scan(&id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read feed identity %s: %w", source, err)
	}
	return id, nil
}

// AdoptCheckpoint gives source the checkpoint (sequence and identity) that
// the index keeps under another name, when source has none: of the names
// formerly reports true for, the one saved last. It returns that name, ""
// when nothing moved. A source that renames how it names itself keeps its
// checkpoint this way; whether the checkpoint still describes what the
// source reads is for the source to check.
func (s *Store) AdoptCheckpoint(ctx context.Context, source string, formerly func(name string) bool) (string, error) {
	var from string
	err := s.write(ctx, "adopt checkpoint", func(tx *writeTx) error {
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
