package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
	_ "github.com/mattn/go-sqlite3" // registers the sqlite3 driver
	"github.com/vaultask/vaultask/index/markdown"
)

// The sqlite-vec extension must be registered before the first connection opens.
var registerVec sync.Once

// ErrEmbeddingMismatch is returned by Open when the index was built with a
// different embedding model or dimension than the one configured.
var ErrEmbeddingMismatch = errors.New("embedding model mismatch")

// ErrReadOnly is returned by write methods of a store opened ReadOnly.
var ErrReadOnly = errors.New("index opened read-only")

// EmbeddingSpace names the vector space of chunks_vec: vectors from different
// models are never comparable, so the index records which one it holds.
type EmbeddingSpace struct {
	Model string
	Dim   int
}

// Options configure a Store. The zero value of every field but Path has a default.
type Options struct {
	Path        string
	Space       EmbeddingSpace
	Sensitivity Classifier
	// FrontmatterKey overrides a note's sensitivity (default "sensitivity").
	FrontmatterKey string
	// Chunking sets chunk sizes; zero fields take markdown.DefaultChunkOptions.
	Chunking markdown.ChunkOptions
	Readers  int  // size of the reader pool; default 4
	Rebuild  bool // accept a changed embedding space by dropping every vector
	// ReadOnly opens an existing index without a writer, for dry runs: no
	// migration runs and every write method returns ErrReadOnly.
	ReadOnly bool
	Logger   *slog.Logger
}

// Store is the index: one SQLite file, one writer connection and a pool of
// readers that see WAL snapshots while the writer commits.
type Store struct {
	path           string
	space          EmbeddingSpace
	classes        Classifier
	frontmatterKey string
	chunking       markdown.ChunkOptions
	log            *slog.Logger

	writer *sql.DB // MaxOpenConns 1: SQLite allows one writer at a time
	reader *sql.DB

	mu sync.Mutex // serialises Apply and other multi-statement writes

	// changed is poked after a commit that left chunks without vectors, so
	// the Vectorizer wakes without polling.
	changed chan struct{}
}

// Changed delivers a signal after a write that put chunks on the embedding
// backlog. Signals coalesce: one pending signal stands for any number.
func (s *Store) Changed() <-chan struct{} { return s.changed }

func (s *Store) signalChanged() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Open opens (creating if needed) the index at opts.Path, applies pending
// migrations and checks that the file's embedding space matches opts.Space.
// A mismatch returns ErrEmbeddingMismatch naming both models; Rebuild resets it.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Path == "" {
		return nil, errors.New("open index: empty path")
	}
	if opts.Space.Model == "" || opts.Space.Dim <= 0 {
		return nil, fmt.Errorf("open index: embedding space needs a model and a positive dimension, got %q/%d", opts.Space.Model, opts.Space.Dim)
	}
	if opts.Readers <= 0 {
		opts.Readers = 4
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.FrontmatterKey == "" {
		opts.FrontmatterKey = FrontmatterKey
	}
	def := markdown.DefaultChunkOptions()
	if opts.Chunking.TargetTokens <= 0 {
		opts.Chunking.TargetTokens = def.TargetTokens
	}
	if opts.Chunking.MinTokens <= 0 {
		opts.Chunking.MinTokens = def.MinTokens
	}
	if opts.Chunking.MaxTokens <= 0 {
		opts.Chunking.MaxTokens = def.MaxTokens
	}
	if err := opts.Sensitivity.Validate(); err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	registerVec.Do(sqlite_vec.Auto)

	s := &Store{path: opts.Path, space: opts.Space, classes: opts.Sensitivity, frontmatterKey: opts.FrontmatterKey, chunking: opts.Chunking, changed: make(chan struct{}, 1), log: opts.Logger.With("component", "index")}
	if opts.ReadOnly {
		return openReadOnly(ctx, s, opts.Readers)
	}
	var err error
	if s.writer, err = openDB(opts.Path, false); err != nil {
		return nil, err
	}
	s.writer.SetMaxOpenConns(1)
	if err := migrate(ctx, s.writer); err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("open index %s: %w", opts.Path, err)
	}
	if err := s.ensureSpace(ctx, opts.Rebuild); err != nil {
		s.writer.Close()
		return nil, err
	}
	if s.reader, err = openDB(opts.Path, true); err != nil {
		s.writer.Close()
		return nil, err
	}
	s.reader.SetMaxOpenConns(opts.Readers)
	s.reader.SetMaxIdleConns(opts.Readers)
	return s, nil
}

func openDB(path string, readOnly bool) (*sql.DB, error) {
	if dir := filepath.Dir(path); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("open index %s: directory %s does not exist (set index.path or VAULTASK_INDEX__PATH)", path, dir)
		}
	}
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "1")
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	if readOnly {
		q.Set("mode", "ro")
		q.Set("_query_only", "1")
	} else {
		q.Set("_txlock", "immediate")
		// Incremental auto-vacuum lets CompactVectors hand freed pages back
		// to the file system; it takes effect only on a new file.
		q.Set("_auto_vacuum", "incremental")
	}
	db, err := sql.Open("sqlite3", "file:"+url.PathEscape(path)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	return db, nil
}

func openReadOnly(ctx context.Context, s *Store, readers int) (*Store, error) {
	if _, err := os.Stat(s.path); err != nil {
		return nil, fmt.Errorf("open index read-only: %w", err)
	}
	var err error
	if s.reader, err = openDB(s.path, true); err != nil {
		return nil, err
	}
	s.reader.SetMaxOpenConns(readers)
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		s.reader.Close()
		return nil, err
	}
	var applied int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil || applied != len(names) {
		s.reader.Close()
		return nil, fmt.Errorf("open index %s read-only: its schema is not current (run once without --dry-run to migrate it)", s.path)
	}
	model, _, err := getMeta(ctx, s.reader, "embedding_model")
	if err == nil && model != s.space.Model {
		err = fmt.Errorf("%w: the index at %s holds vectors of %s but the configured embedding model is %s", ErrEmbeddingMismatch, s.path, model, s.space.Model)
	}
	if err != nil {
		s.reader.Close()
		return nil, err
	}
	return s, nil
}

// Close closes both pools and returns the first error.
func (s *Store) Close() error {
	err := s.reader.Close()
	if s.writer != nil {
		err = errors.Join(err, s.writer.Close())
	}
	return err
}

// Path is the index file's path.
func (s *Store) Path() string { return s.path }

// Space is the embedding space the index holds.
func (s *Store) Space() EmbeddingSpace { return s.space }

// ensureSpace records the embedding space on first use, creates chunks_vec for
// it, and refuses a different one unless reset is true, in which case every
// vector is dropped and every chunk goes back on the embedding backlog. An
// unchanged space is kept even when reset is true: its vectors are still valid.
func (s *Store) ensureSpace(ctx context.Context, reset bool) error {
	model, _, err := getMeta(ctx, s.writer, "embedding_model")
	if err != nil {
		return err
	}
	dimText, _, err := getMeta(ctx, s.writer, "embedding_dim")
	if err != nil {
		return err
	}
	dim, _ := strconv.Atoi(dimText)
	same := model == s.space.Model && dim == s.space.Dim
	if model != "" && (same || !reset) {
		if !same {
			return fmt.Errorf("%w: the index at %s holds vectors of %s (%d dimensions) but the configured embedding model is %s (%d dimensions); run `vaultask index --rebuild` to re-embed every chunk with the new model",
				ErrEmbeddingMismatch, s.path, model, dim, s.space.Model, s.space.Dim)
		}
		return nil
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmts := []string{
		`DROP TABLE IF EXISTS chunks_vec`,
		fmt.Sprintf(`CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[%d] distance_metric=cosine, sensitivity text)`, s.space.Dim),
		`UPDATE chunks SET embedded = 0`,
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create vector table: %w", err)
		}
	}
	if err := setMeta(ctx, tx, "embedding_model", s.space.Model); err != nil {
		return err
	}
	if err := setMeta(ctx, tx, "embedding_dim", strconv.Itoa(s.space.Dim)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.signalChanged()
	return nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getMeta(ctx context.Context, q querier, key string) (string, bool, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read meta %s: %w", key, err)
	}
	return v, true, nil
}

func setMeta(ctx context.Context, e execer, key, value string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("write meta %s: %w", key, err)
	}
	return nil
}
