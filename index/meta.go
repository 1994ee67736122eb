package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// meta holds the index's own small facts by key: the schema version, the
// classification, the counters its caches are keyed by, the last run.

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// metaSQL reads one value of meta.
const metaSQL = `SELECT value FROM meta WHERE key = ?`

func getMeta(ctx context.Context, q querier, key string) (string, bool, error) {
	var v string
	err := q.QueryRowContext(ctx, metaSQL, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read meta %s: %w", key, err)
	}
	return v, true, nil
}

func deleteMeta(ctx context.Context, e execer, key string) error {
	if _, err := e.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, key); err != nil {
		return fmt.Errorf("delete meta %s: %w", key, err)
	}
	return nil
}

// countMeta adds one to the counter meta holds under key (1 when it holds
// none yet).
func countMeta(ctx context.Context, e execer, key string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, '1')
		ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`, key)
	if err != nil {
		return fmt.Errorf("count meta %s: %w", key, err)
	}
	return nil
}

func setMeta(ctx context.Context, e execer, key, value string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("write meta %s: %w", key, err)
	}
	return nil
}
