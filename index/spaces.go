package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/vaultask/vaultask/vault"
)

// errEmbeddingMismatch is returned by Open when the index was built with a
// different embedding model or dimension than the one configured.
var errEmbeddingMismatch = errors.New("embedding model mismatch")

// errOtherSpace is a query vector of another embedding space than the one
// the index searches: its distances to the index's vectors would mean
// nothing.
var errOtherSpace = errors.New("query vector of another embedding space")

// storedSpace is the index's active embedding space (see the spaces table)
// and its id; zero before its first writer.
func storedSpace(ctx context.Context, q querier) (int64, vault.EmbeddingSpace, error) {
	var id int64
	var space vault.EmbeddingSpace
	err := q.QueryRowContext(ctx, `SELECT id, model, dim FROM spaces WHERE state = 'active'`).Scan(&id, &space.Model, &space.Dim)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, vault.EmbeddingSpace{}, nil
	}
	if err != nil {
		return 0, space, fmt.Errorf("read the embedding space: %w", err)
	}
	return id, space, nil
}

func (s *Store) spaceMismatch(have vault.EmbeddingSpace) error {
	return fmt.Errorf("%w: the index at %s holds vectors of %s (%d dimensions) but the configured embedding model is %s (%d dimensions); run `vaultask index --rebuild` to re-embed every chunk with the configured model",
		errEmbeddingMismatch, s.path, have.Model, have.Dim, s.space.Model, s.space.Dim)
}

// ensureSpace makes the configured space the index's active one: recorded
// on first use, refused when it differs unless reset is true, in which case
// the old space goes with every vector of it and every chunk goes back on
// the embedding backlog. An unchanged space is kept even when reset is
// true: its vectors are still valid.
func (s *Store) ensureSpace(ctx context.Context, reset bool) error {
	id, have, err := storedSpace(ctx, s.writer)
	if err != nil {
		return err
	}
	if have.Model != "" && (have == s.space || !reset) {
		if have != s.space {
			return s.spaceMismatch(have)
		}
		s.spaceID = id
		return nil
	}
	err = inTx(ctx, s.writer, "record the embedding space", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM spaces WHERE id = ?`, id); err != nil {
			return err
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO spaces(model, dim, state) VALUES (?, ?, 'active')`, s.space.Model, s.space.Dim)
		if err != nil {
			return err
		}
		if id, err = r.LastInsertId(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chunks SET embedded = 0, staged = NULL`); err != nil {
			return err
		}
		return bumpVectorsVersion(ctx, tx)
	})
	if err != nil {
		return err
	}
	s.spaceID = id
	s.signalChanged()
	return nil
}

// checkQuery refuses a query vector that is not of the space the index
// searches, or not of its dimension; what names the search in errors.
func (s *Store) checkQuery(what string, q vault.QueryVector) error {
	if q.Space != s.space {
		return fmt.Errorf("%s: %w: the query was embedded in %s, the index searches %s", what, errOtherSpace, q.Space, s.space)
	}
	if len(q.Values) != s.space.Dim {
		return fmt.Errorf("%s: query has %d dimensions, the index holds %d", what, len(q.Values), s.space.Dim)
	}
	return nil
}
