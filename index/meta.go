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

// graphVersionMeta counts the commits that may change what a graph walk
// reads: every write but those that touch vectors only (see write). A
// walk reads it in its own snapshot, so what it remembers under one count
// is what every snapshot at that count holds.
const graphVersionMeta = "graph_version"

// bumpGraphVersion counts one more commit that may change the graph.
func bumpGraphVersion(ctx context.Context, e execer) error {
	return countMeta(ctx, e, graphVersionMeta)
}

// vectorsVersionMeta counts the commits that change the stored vectors, or
// the sensitivity of a chunk with a vector, so that a read-only store knows
// when its vector set is out of date.
const vectorsVersionMeta = "vectors_version"

// bumpVectorsVersion counts one more commit that changed the vectors.
func bumpVectorsVersion(ctx context.Context, e execer) error {
	return countMeta(ctx, e, vectorsVersionMeta)
}

// lastRunMeta holds when the last full index or reconcile run completed.
const lastRunMeta = "last_run"
