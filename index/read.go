package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"

	"github.com/vaultask/vaultask/vault"
)

const hitColumns = `c.rowid, c.chunk_id, c.doc_id, d.path, d.title, c.ordinal, c.heading_path, c.prelude, c.body, c.sensitivity, c.embedded`

// hitFields points Scan at hitColumns followed by a score column.
func hitFields(h *vault.Chunk) []any {
	return []any{&h.RowID, &h.ChunkID, &h.DocID, &h.Path, &h.Title, &h.Ordinal, &h.HeadingPath, &h.Prelude, &h.Body, &h.Sensitivity, &h.Embedded, &h.Score}
}

// SearchVectorExact returns the k nearest chunks to vec by cosine distance,
// by brute force over every vector: the reference SearchVector's shortlist
// is measured against. With ScopeOpen the vec0 metadata column filters
// inside the KNN, before k.
func (s *Store) SearchVectorExact(ctx context.Context, vec []float32, k int, scope vault.Scope) ([]vault.Chunk, error) {
	if k <= 0 {
		return nil, nil
	}
	if len(vec) != s.space.Dim {
		return nil, fmt.Errorf("vector search: query has %d dimensions, the index holds %d", len(vec), s.space.Dim)
	}
	blob, err := sqlite_vec.SerializeFloat32(vec)
	if err != nil {
		return nil, err
	}
	knn := `SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?`
	if scope.OpenOnly() {
		knn += ` AND sensitivity = 'open'`
	}
	// The join re-checks the scope on chunks too, so a stale metadata value
	// could only ever hide a chunk, never reveal one.
	hits, err := queryAll(ctx, s.reader, hitFields, `WITH knn AS (`+knn+`)
		SELECT `+hitColumns+`, knn.distance FROM knn JOIN chunks c ON c.rowid = knn.rowid JOIN docs d ON d.doc_id = c.doc_id
		WHERE (? = 0 OR c.sensitivity = 'open')
		ORDER BY knn.distance`, blob, k, scope.OpenOnly())
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	return hits, nil
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
