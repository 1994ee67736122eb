package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// errVec0Version means an index's vectors are in a sqlite-vec table that
// this vaultask does not know how to read: made by, or to be read through,
// another version of sqlite-vec than those it was checked with.
var errVec0Version = errors.New("unknown sqlite-vec version")

// vec0Versions are the versions of sqlite-vec whose vec0 tables vec0Table
// reads: the version linked (vec_version()) and the one that created the
// table (its _info shadow table) must both be among them. vaultask has
// only ever linked v0.1.6.
var vec0Versions = []string{"v0.1.6"}

// vec0Table is sqlite-vec's vec0 table chunks_vec, as indexes before
// migration 0014 kept their vectors: the one place that reads sqlite-vec's
// tables, and only to move the vectors out (moveVec0Vectors). sqlite-vec
// stays linked for that upgrade alone. Like litestream's WAL reader, it
// checks the format's version before it reads anything and refuses one it
// does not know.
type vec0Table struct {
	tx   *sql.Tx
	name string
}

// openVec0Table returns chunks_vec after checking that both the linked
// sqlite-vec and the one that created the table are of vec0Versions.
func openVec0Table(ctx context.Context, tx *sql.Tx) (*vec0Table, error) {
	t := &vec0Table{tx: tx, name: "chunks_vec"}
	var linked string
	if err := tx.QueryRowContext(ctx, `SELECT vec_version()`).Scan(&linked); err != nil {
		return nil, fmt.Errorf("read the vectors: sqlite-vec: %w", err)
	}
	var created string
	err := tx.QueryRowContext(ctx, `SELECT value FROM `+t.name+`_info WHERE key = 'CREATE_VERSION'`).Scan(&created)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read the vectors: the version of sqlite-vec that made %s: %w", t.name, err)
	}
	for _, v := range []struct{ what, version string }{{"was made by", created}, {"is read through", linked}} {
		if !slices.Contains(vec0Versions, v.version) {
			return nil, fmt.Errorf("%w: the index's vectors are in a sqlite-vec table (%s) that %s sqlite-vec %q, and this vaultask reads only %q: move the index file away to rebuild it, or upgrade it with the vaultask release that made it", errVec0Version, t.name, v.what, v.version, vec0Versions)
		}
	}
	return t, nil
}

// copyTo inserts every vector of the table whose chunk still exists into
// vectors, in space, through vec0's own reading of its table.
func (t *vec0Table) copyTo(ctx context.Context, space int64) error {
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO vectors(space, chunk, embedding)
		SELECT ?, v.rowid, v.embedding FROM `+t.name+` v WHERE v.rowid IN (SELECT rowid FROM chunks) ORDER BY v.rowid`, space); err != nil {
		return fmt.Errorf("copy the vectors out of %s: %w", t.name, err)
	}
	return nil
}

// drop drops the table and its shadow tables.
func (t *vec0Table) drop(ctx context.Context) error {
	if _, err := t.tx.ExecContext(ctx, `DROP TABLE `+t.name); err != nil {
		return fmt.Errorf("drop %s: %w", t.name, err)
	}
	return nil
}

// moveVec0Vectors is migration 0014's work: the vectors of chunks_vec, if
// the index has one, move to the active space's rows of vectors, and
// chunks_vec goes. A chunk marked embedded whose vector was not there (none
// should be) goes back on the embedding backlog rather than be missed by
// search for ever.
func moveVec0Vectors(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'chunks_vec'`).Scan(&n); err != nil || n == 0 {
		return err
	}
	t, err := openVec0Table(ctx, tx)
	if err != nil {
		return err
	}
	var space int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM spaces WHERE state = 'active'`).Scan(&space); err != nil {
		return fmt.Errorf("the active embedding space: %w", err)
	}
	if err := t.copyTo(ctx, space); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE chunks SET embedded = 0 WHERE embedded = 1
		AND rowid NOT IN (SELECT chunk FROM vectors WHERE space = ?)`, space); err != nil {
		return err
	}
	if err := t.drop(ctx); err != nil {
		return err
	}
	return bumpVectorsVersion(ctx, tx)
}
