package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// oldIndex makes the index at path as vaultask kept it before migration
// 0014: its vectors in sqlite-vec's vec0 table chunks_vec (with the layout
// the store created it with), the embedding space in meta, and the
// migrations from 0014 on not applied. edit runs on the old file before it is closed.
func oldIndex(t *testing.T, path string, edit func(tx *sql.Tx)) {
	t.Helper()
	s := clusteredStore(t, path, 60)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := openDB(path, dbWriter)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = inTx(context.Background(), db, "make an old index", func(tx *sql.Tx) error {
		for _, q := range []string{
			`CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[512] distance_metric=cosine, sensitivity text, chunk_size=64)`,
			`INSERT INTO chunks_vec(rowid, embedding, sensitivity) SELECT v.chunk, v.embedding, c.sensitivity FROM vectors v JOIN chunks c ON c.rowid = v.chunk`,
			fmt.Sprintf(`INSERT INTO meta(key, value) VALUES ('embedding_model', '%s'), ('embedding_dim', '%d')`, space512.Model, space512.Dim),
			`DROP TABLE vectors`,
			`DROP TABLE spaces`,
			`DROP INDEX docs_recent`,
			`DELETE FROM schema_migrations WHERE name >= 'migrations/0014'`,
		} {
			if _, err := tx.Exec(q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		edit(tx)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An index whose vectors are in sqlite-vec's table is migrated when a
// writer opens it: every vector moves to the vectors table unchanged (the
// same bytes, so the same distances), chunks_vec and its shadow tables go,
// and search finds what it found. A chunk marked embedded whose vector was
// missing goes back on the embedding backlog.
func TestVec0VectorsMoveOut(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	var lost int64
	var want string
	oldIndex(t, path, func(q *sql.Tx) {
		if err := q.QueryRow(`SELECT rowid FROM chunks WHERE doc_id = ?`, strings.ToLower(notePath(7))).Scan(&lost); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Exec(`DELETE FROM chunks_vec WHERE rowid = ?`, lost); err != nil {
			t.Fatal(err)
		}
		want = vec0Digest(t, q)
	})
	s := mustOpen(t, Options{Path: path, Space: space512, Sensitivity: Classifier{PersonalPaths: []string{"p/**"}}})
	n, got := vectorDigest(t, s)
	if got != want || n != 59 {
		t.Fatalf("%d vectors after the migration (want 59), the same bytes: %v", n, got == want)
	}
	if left := count(t, s, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'chunks_vec%'`); left != 0 {
		t.Fatalf("%d of sqlite-vec's tables left", left)
	}
	if waiting := count(t, s, `SELECT count(*) FROM chunks WHERE embedded = 0`); waiting != 1 {
		t.Fatalf("%d chunks back on the backlog, want the one whose vector was missing", waiting)
	}
	if st, err := s.Stats(ctx); err != nil || st.EmbeddingModel != space512.Model || st.EmbeddingDim != 512 || st.Vectors != 59 {
		t.Fatalf("stats after the migration: %+v, %v", st, err)
	}
	mustShortlist(t, s)
	mustMatchIndex(t, s)
	hits, err := s.Search().SearchVector(ctx, s.queryOf(clustered(3)), 1, vault.ScopeAll)
	if err != nil || len(hits) != 1 || hits[0].Path != notePath(3) {
		t.Fatalf("SearchVector after the migration = %v, %v", paths(hits), err)
	}
}

// vec0Digest hashes the vectors of chunks_vec as vectorDigest hashes the
// vectors table's.
func vec0Digest(t *testing.T, tx *sql.Tx) string {
	t.Helper()
	rows, err := tx.Query(`SELECT rowid, embedding FROM chunks_vec ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	_, digest := digestRows(t, rows)
	return digest
}

// A vec0 table made by a sqlite-vec this vaultask does not know is refused
// with an error naming the version, before anything is read, and the index
// is left as it was.
func TestVec0UnknownVersionRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	oldIndex(t, path, func(tx *sql.Tx) {
		if _, err := tx.Exec(`UPDATE chunks_vec_info SET value = 'v0.2.0' WHERE key = 'CREATE_VERSION'`); err != nil {
			t.Fatal(err)
		}
	})
	_, err := Open(context.Background(), Options{Path: path, Space: space512})
	if !errors.Is(err, errVec0Version) || !strings.Contains(err.Error(), `"v0.2.0"`) {
		t.Fatalf("Open of an index made by sqlite-vec v0.2.0: %v, want errVec0Version naming it", err)
	}
	db, err := openDB(path, dbReader)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name IN ('chunks_vec', 'vectors')`).Scan(&tables); err != nil || tables != 1 {
		t.Fatalf("after the refusal: %d of chunks_vec and vectors, %v; want chunks_vec alone", tables, err)
	}
}
