package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// write runs fn in one transaction of the writer connection, holding the
// store's write lock: committed when fn returns nil, rolled back otherwise.
// What fn changes in chunks_vec (recorded in s.vlog) bumps the vectors'
// version in the same transaction and reaches the shortlist once committed.
// what names the operation in errors. A read-only store has no writer and
// returns errReadOnly. (pocketbase's RunInTransaction is the model.)
func (s *Store) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writer == nil {
		return errReadOnly
	}
	sl := s.short.Load()
	s.vlog = vectorLog{keep: sl != nil}
	defer func() { s.vlog = vectorLog{} }()
	err := inTx(ctx, s.writer, what, func(tx *sql.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if s.vlog.changed {
			return bumpVectorsVersion(ctx, tx)
		}
		return nil
	})
	// The shortlist follows only what committed. A reader whose snapshot
	// is a commit ahead of it or behind it meanwhile is still safe: its
	// rescore re-reads every candidate in its own snapshot.
	if err == nil && len(s.vlog.changes) > 0 {
		sl.apply(s.vlog.changes)
	}
	return err
}

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

// txStmts runs a write transaction's statements, each prepared once: Apply
// runs the same few statements for every note and every link, and preparing
// one on a table with full-text triggers (which compiles the triggers too)
// cost more than running it. The statements close with the transaction.
type txStmts struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func newTxStmts(tx *sql.Tx) *txStmts { return &txStmts{tx: tx, stmts: map[string]*sql.Stmt{}} }

func (t *txStmts) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := t.stmts[query]; ok {
		return st, nil
	}
	st, err := t.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	t.stmts[query] = st
	return st, nil
}

func (t *txStmts) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (t *txStmts) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (t *txStmts) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.prepare(ctx, query)
	if err != nil {
		return t.tx.QueryRowContext(ctx, query, args...) // a Row carrying the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// readStmts are the retrieval path's statements (the graph reads, the
// vector rescore, Docs), each prepared once on the reader pool and kept
// until Close: database/sql keeps a statement prepared on every connection
// it has run on, so a question's reads skip SQLite's parse and plan. On the
// hub index planning the neighbours' statement took 1.0 ms, running it for
// eight notes 0.4 ms. Only queries whose text is fixed go through it, so it
// holds a handful of statements.
type readStmts struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newReadStmts(db *sql.DB) *readStmts {
	return &readStmts{db: db, stmts: map[string]*sql.Stmt{}}
}

func (r *readStmts) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.stmts[query]; ok {
		return st, nil
	}
	st, err := r.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	r.stmts[query] = st
	return st, nil
}

func (r *readStmts) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := r.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (r *readStmts) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := r.prepare(ctx, query)
	if err != nil {
		return r.db.QueryRowContext(ctx, query, args...) // a Row carrying the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// close closes every statement; the store closes its pools after.
func (r *readStmts) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	for q, st := range r.stmts {
		err = errors.Join(err, st.Close())
		delete(r.stmts, q)
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
