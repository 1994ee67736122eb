package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// read runs fn in one read-only transaction of the reader pool: every query
// in it sees the same WAL snapshot, whatever the writer commits meanwhile.
func (s *Store) read(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func inTx(ctx context.Context, db *sql.DB, what string, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", what, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", what, err)
	}
	return nil
}

// stmtCache runs statements on db (a *sql.Tx or a *sql.DB), each
// prepared once and kept: the same query text runs the statement prepared
// the first time.
//
// Apply's (newTxStmts) live as long as its write transaction, with which
// they close: Apply runs the same few statements for every note and every
// link, and preparing one on a table with full-text triggers (which
// compiles the triggers too) cost more than running it.
//
// The retrieval path's (newReadStmts: the graph reads, the vector rescore,
// Docs) are prepared on the reader pool and kept until Close: database/sql
// keeps a statement prepared on every connection it has run on, so a
// question's reads skip SQLite's parse and plan. On the hub index planning
// the neighbours' statement took 1.0 ms, running it for eight notes 0.4 ms.
// Only queries whose text is fixed go through either, so each holds a
// handful of statements.
type stmtCache struct {
	db interface {
		PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
	mu    sync.Mutex // the reader pool's is shared by concurrent questions
	stmts map[string]*sql.Stmt
	inTx  map[string]*sql.Stmt // see in; written once, before any read
}

func newTxStmts(tx *sql.Tx) *stmtCache   { return &stmtCache{db: tx, stmts: map[string]*sql.Stmt{}} }
func newReadStmts(db *sql.DB) *stmtCache { return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}} }

func (c *stmtCache) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = st
	return st, nil
}

func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.prepare(ctx, query)
	if err != nil {
		return c.db.QueryRowContext(ctx, query, args...) // a Row carrying the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// prepareInTx prepares inTxQueries, before the store is used: c.inTx is
// read without a lock after.
func (c *stmtCache) prepareInTx(ctx context.Context) error {
	c.inTx = map[string]*sql.Stmt{}
	for _, q := range inTxQueries {
		st, err := c.prepare(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %.60q: %w", q, err)
		}
		c.inTx[q] = st
	}
	return nil
}

// in runs queries inside tx: those of inTxQueries through the statements
// prepared on the pool when the store opened (a read transaction that
// needs several statements in one snapshot skips their parse and plan),
// any other as it is. It never takes a connection of the pool, nor c.mu,
// which a first-time prepare holds while it waits for one.
func (c *stmtCache) in(tx *sql.Tx) rowQuerier { return txStmts{c.inTx, tx} }

type txStmts struct {
	prepared map[string]*sql.Stmt
	tx       *sql.Tx
}

func (t txStmts) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st, ok := t.prepared[query]; ok {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t txStmts) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st, ok := t.prepared[query]; ok {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// close closes every statement; the store closes its pools after.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	for q, st := range c.stmts {
		err = errors.Join(err, st.Close())
		delete(c.stmts, q)
	}
	return err
}

// queryAll runs query and reads every row into a T, whose fields dest
// points Scan at, in order: the one loop over rows the package needs.
func queryAll[T any](ctx context.Context, q rowQuerier, dest func(*T) []any, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(dest(&v)...); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// one points Scan at a single value.
func one[T any](v *T) []any { return []any{v} }

type rowQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// idList passes a set of ids as one JSON parameter, read with json_each, so
// a query takes any number of them.
func idList[T any](ids []T) string {
	b, _ := json.Marshal(ids) // strings and integers always marshal
	return string(b)
}
