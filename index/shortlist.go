package index

import (
	"context"
	"database/sql"
	"fmt"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"

	"github.com/vaultask/vaultask/vault"
)

// BuildShortlist (re)creates chunks_vec_bq, a bit-quantised copy of every
// vector in chunks_vec (one bit per dimension, its sign) with its
// sensitivity, for SearchVectorShortlist, and returns how many vectors it
// holds. Apply and PutVectors do not keep it up to date: it exists so that
// the benchmarks can measure what a shortlist gains over brute force, and
// what it loses in recall, before the index maintains one.
func (s *Store) BuildShortlist(ctx context.Context) (int, error) {
	var n int
	err := s.write(ctx, "build shortlist", func(tx *sql.Tx) error {
		for _, q := range []string{
			`DROP TABLE IF EXISTS chunks_vec_bq`,
			fmt.Sprintf(`CREATE VIRTUAL TABLE chunks_vec_bq USING vec0(embedding bit[%d], sensitivity text)`, s.space.Dim),
			`INSERT INTO chunks_vec_bq(rowid, embedding, sensitivity) SELECT rowid, vec_quantize_binary(embedding), sensitivity FROM chunks_vec`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM chunks_vec_bq`).Scan(&n)
	})
	return n, err
}

// SearchVectorShortlist is SearchVector by way of BuildShortlist's table:
// the candidates nearest to vec by Hamming distance between bit vectors,
// then those rescored by cosine distance on their float vectors, the k best
// kept. With ScopeOpen the shortlist filters on sensitivity inside its KNN,
// as SearchVector does.
func (s *Store) SearchVectorShortlist(ctx context.Context, vec []float32, k, candidates int, scope vault.Scope) ([]vault.Chunk, error) {
	if k <= 0 {
		return nil, nil
	}
	if len(vec) != s.space.Dim {
		return nil, fmt.Errorf("vector shortlist: query has %d dimensions, the index holds %d", len(vec), s.space.Dim)
	}
	blob, err := sqlite_vec.SerializeFloat32(vec)
	if err != nil {
		return nil, err
	}
	short := `SELECT rowid FROM chunks_vec_bq WHERE embedding MATCH vec_quantize_binary(?) AND k = ?`
	if scope.OpenOnly() {
		short += ` AND sensitivity = 'open'`
	}
	// The rescore looks each candidate's float vector up by rowid.
	hits, err := queryAll(ctx, s.reader, hitFields, `WITH short AS (`+short+`),
		knn AS (SELECT short.rowid AS rowid, vec_distance_cosine(v.embedding, ?) AS distance
			FROM short JOIN chunks_vec v ON v.rowid = short.rowid ORDER BY distance LIMIT ?)
		SELECT `+hitColumns+`, knn.distance FROM knn JOIN chunks c ON c.rowid = knn.rowid JOIN docs d ON d.doc_id = c.doc_id
		WHERE (? = 0 OR c.sensitivity = 'open')
		ORDER BY knn.distance`, blob, max(candidates, k), blob, k, scope.OpenOnly())
	if err != nil {
		return nil, fmt.Errorf("vector shortlist: %w", err)
	}
	return hits, nil
}
