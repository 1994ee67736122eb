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

// Backlog returns up to limit chunks that have no vector yet, oldest first.
func (s *Store) Backlog(ctx context.Context, limit int) ([]Pending, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT rowid, prelude, body FROM chunks WHERE embedded = 0 ORDER BY rowid LIMIT ?`, limit)
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
