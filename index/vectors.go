package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
)

// Pending is a chunk waiting for its vector: the text to embed is its
// prelude and body together, as it is searched.
type Pending struct {
	RowID int64
	Text  string
}

// Vector is an embedding of Text for the chunk with RowID.
type Vector struct {
	RowID     int64
	Text      string // the Pending text that was embedded
	Embedding []float32
}

func embedText(prelude, body string) string { return prelude + "\n\n" + body }

// Backlog returns the chunks of up to maxNotes notes that have chunks
// without a vector, oldest first. Whole notes, so that a batch of vectors
// never leaves a note half embedded.
func (s *Store) Backlog(ctx context.Context, maxNotes int) ([]Pending, error) {
	rows, err := s.reader.QueryContext(ctx, `
		WITH pending AS (
			SELECT doc_id, min(rowid) AS first FROM chunks WHERE embedded = 0
			GROUP BY doc_id ORDER BY first LIMIT ?)
		SELECT c.rowid, c.prelude, c.body FROM chunks c JOIN pending p ON p.doc_id = c.doc_id
		WHERE c.embedded = 0 ORDER BY c.rowid`, maxNotes)
	if err != nil {
		return nil, fmt.Errorf("read backlog: %w", err)
	}
	defer rows.Close()
	var out []Pending
	for rows.Next() {
		var p Pending
		var prelude, body string
		if err := rows.Scan(&p.RowID, &prelude, &body); err != nil {
			return nil, fmt.Errorf("read backlog: %w", err)
		}
		p.Text = embedText(prelude, body)
		out = append(out, p)
	}
	return out, rows.Err()
}

// PutVectors stores vectors in one transaction and returns how many it
// wrote. A vector for a chunk that was deleted, re-written or already
// embedded since it was read from the backlog is dropped: a chunk's new text
// is queued again by its own Apply.
func (s *Store) PutVectors(ctx context.Context, vs []Vector) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writer == nil {
		return 0, ErrReadOnly
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("put vectors: %w", err)
	}
	defer tx.Rollback()
	written := 0
	for _, v := range vs {
		if len(v.Embedding) != s.space.Dim {
			return 0, fmt.Errorf("put vectors: chunk %d has %d dimensions, the index holds %d", v.RowID, len(v.Embedding), s.space.Dim)
		}
		var sens, prelude, body string
		var embedded int
		err := tx.QueryRowContext(ctx, `SELECT sensitivity, embedded, prelude, body FROM chunks WHERE rowid = ?`, v.RowID).Scan(&sens, &embedded, &prelude, &body)
		if errors.Is(err, sql.ErrNoRows) || embedded == 1 || embedText(prelude, body) != v.Text {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("put vector %d: %w", v.RowID, err)
		}
		blob, err := sqlite_vec.SerializeFloat32(v.Embedding)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_vec(rowid, embedding, sensitivity) VALUES (?, ?, ?)`, v.RowID, blob, sens); err != nil {
			return 0, fmt.Errorf("put vector %d: %w", v.RowID, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chunks SET embedded = 1 WHERE rowid = ?`, v.RowID); err != nil {
			return 0, fmt.Errorf("put vector %d: %w", v.RowID, err)
		}
		written++
	}
	return written, tx.Commit()
}

// VectorSpace describes chunks_vec's storage. sqlite-vec allocates vectors in
// fixed-size chunks and never reuses the slot of a deleted row, so every edit
// leaves a dead slot behind.
type VectorSpace struct {
	Live      int // vectors stored
	Allocated int // slots allocated, live or dead
}

// Dead is the number of slots held by deleted vectors.
func (v VectorSpace) Dead() int { return v.Allocated - v.Live }

func vectorSpace(ctx context.Context, q querier) (VectorSpace, error) {
	var v VectorSpace
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM chunks_vec_rowids`).Scan(&v.Live); err != nil {
		return v, fmt.Errorf("vector space: %w", err)
	}
	if err := q.QueryRowContext(ctx, `SELECT coalesce(sum(size), 0) FROM chunks_vec_chunks`).Scan(&v.Allocated); err != nil {
		return v, fmt.Errorf("vector space: %w", err)
	}
	return v, nil
}

// VectorSpace reports live and allocated vector slots.
func (s *Store) VectorSpace(ctx context.Context) (VectorSpace, error) {
	return vectorSpace(ctx, s.reader)
}

// CompactVectors rebuilds chunks_vec into a fresh table when dead slots
// outnumber half the live ones (and more than one allocation chunk), then
// returns the freed pages to the file system. force rebuilds regardless. It
// reports the space before and whether it rebuilt.
func (s *Store) CompactVectors(ctx context.Context, force bool) (VectorSpace, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writer == nil {
		return VectorSpace{}, false, ErrReadOnly
	}
	before, err := vectorSpace(ctx, s.writer)
	if err != nil {
		return before, false, err
	}
	const slotsPerChunk = 1024 // sqlite-vec's default chunk_size
	if !force && (before.Dead() <= before.Live/2 || before.Dead() <= slotsPerChunk) {
		return before, false, nil
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return before, false, err
	}
	defer tx.Rollback()
	stmts := []string{
		`CREATE TEMP TABLE vec_keep AS SELECT rowid AS id, embedding, sensitivity FROM chunks_vec`,
		`DROP TABLE chunks_vec`,
		fmt.Sprintf(`CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[%d] distance_metric=cosine, sensitivity text)`, s.space.Dim),
		`INSERT INTO chunks_vec(rowid, embedding, sensitivity) SELECT id, embedding, sensitivity FROM vec_keep ORDER BY id`,
		`DROP TABLE vec_keep`,
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return before, false, fmt.Errorf("compact vectors: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return before, false, fmt.Errorf("compact vectors: %w", err)
	}
	if _, err := s.writer.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return before, true, fmt.Errorf("compact vectors: vacuum: %w", err)
	}
	s.log.Info("compacted vectors", "live", before.Live, "dead_slots", before.Dead())
	return before, true, nil
}
