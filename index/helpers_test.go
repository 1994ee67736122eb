package index

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/vaultask/vaultask/vault"
)

var testSpace = vault.EmbeddingSpace{Model: "test/fixed", Dim: 4}

func mustOpen(tb testing.TB, opts Options) *Store {
	tb.Helper()
	if opts.Path == "" {
		opts.Path = filepath.Join(tb.TempDir(), "index.db")
	}
	if opts.Space.Model == "" {
		opts.Space = testSpace
	}
	s, err := Open(context.Background(), opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func mustApply(tb testing.TB, s *Store, b Batch) ApplyResult {
	tb.Helper()
	res, err := s.Feed().Apply(context.Background(), b)
	if err != nil {
		tb.Fatalf("Apply: %v", err)
	}
	return res
}

func note(path, text string) vault.NoteInput {
	return vault.NoteInput{Path: path, Rev: "1-a", Text: text, MTime: time.Unix(1700000000, 0)}
}

func upserts(notes ...vault.NoteInput) Batch { return Batch{Upserts: notes} }

// count runs a count query on the writer connection, which sees every commit.
func count(tb testing.TB, s *Store, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := s.db().QueryRow(query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

func str(tb testing.TB, s *Store, query string, args ...any) string {
	tb.Helper()
	var v string
	if err := s.db().QueryRow(query, args...).Scan(&v); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return v
}

// embedAll gives every backlog chunk the vector vecFor returns for its text.
func embedAll(tb testing.TB, s *Store, vecFor func(text string) []float32) int {
	tb.Helper()
	ctx := context.Background()
	total := 0
	for {
		pending, err := s.Vectors().Backlog(ctx, 64, 64)
		if err != nil {
			tb.Fatal(err)
		}
		if len(pending) == 0 {
			return total
		}
		vs := make([]Vector, len(pending))
		for i, p := range pending {
			vs[i] = Vector{RowID: p.RowID, Text: p.Text, Embedding: vecFor(p.Text)}
		}
		n, err := s.Vectors().PutVectors(ctx, vs)
		if err != nil {
			tb.Fatal(err)
		}
		total += n
	}
}

func paths(hits []vault.Chunk) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Path
	}
	return out
}

// db is the connection a test reads through: the writer, which sees every
// write at once, or a reader's pool.
func (s *Store) db() *sql.DB {
	if s.writer != nil {
		return s.writer
	}
	return s.reader
}

// queryOf is v as a query vector of s's embedding space.
func (s *Store) queryOf(v []float32) vault.QueryVector {
	return vault.QueryVector{Space: s.space, Values: v}
}
