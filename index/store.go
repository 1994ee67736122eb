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
	"sync/atomic"

	"golang.org/x/sys/unix"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
	"github.com/mattn/go-sqlite3"
	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/internal/routine"
	"github.com/vaultask/vaultask/vault"
)

// registerDriver registers the sqlite-vec extension and driverName once,
// before the first connection opens.
var registerDriver sync.Once

// driverName is go-sqlite3's driver with every connection set up by
// setUpConn.
const driverName = "sqlite3_vaultask"

// mmapSize is how much of the index file each connection maps into memory
// (SQLite's largest by default, 2 GiB less 64 KiB) instead of copying every
// page it reads out of the file with a system call into its own 2 MB page
// cache, which an index of hundreds of megabytes overflows on every
// question. The mapped pages are the kernel's page cache, one copy shared by
// every connection, which the kernel may drop: the process's resident set
// counts them as file pages, once for each connection that mapped them, but
// they are not memory of its own (README, "Memory"). Where mapping fails (a
// 32-bit system short of address space) SQLite goes back to reading. On the
// hub index (170 MB, 17.9k chunks) it cut a question's retrieval from 44 to
// 28 CPU ms, and graph expansion's read of 512 notes' nearest chunks from 28
// to 14 ms.
const mmapSize = 0x7fff0000

// setUpConn maps the file (see mmapSize).
func setUpConn(c *sqlite3.SQLiteConn) error {
	_, err := c.Exec("PRAGMA mmap_size = "+strconv.Itoa(mmapSize), nil)
	return err
}

// errEmbeddingMismatch is returned by Open when the index was built with a
// different embedding model or dimension than the one configured.
var errEmbeddingMismatch = errors.New("embedding model mismatch")

// errReadOnly is returned by write methods of a store opened ReadOnly.
var errReadOnly = errors.New("index opened read-only")

// ErrIndexPath means the index file cannot be created or written where it
// is configured to be.
var ErrIndexPath = errors.New("index path unusable")

// Options configure a Store. The zero value of every field but Path has a default.
type Options struct {
	Path        string
	Space       vault.EmbeddingSpace
	Sensitivity Classifier
	// FrontmatterKey overrides a note's sensitivity (default "sensitivity").
	FrontmatterKey string
	// Chunking sets chunk sizes; zero fields take markdown.DefaultChunkOptions.
	Chunking markdown.ChunkOptions
	Readers  int  // size of the reader pool; default 4
	Rebuild  bool // accept a changed embedding space by dropping every vector
	// ReadOnly opens an existing index without a writer: no migration runs
	// and every write method returns errReadOnly. An index classified with
	// other sensitivity settings is reclassified first, through a writer
	// opened for that alone, unless AsClassified.
	ReadOnly bool
	// AsClassified reads the index as it was classified, whatever the
	// settings: a dry run that reports what reclassifying would change.
	AsClassified bool
	Logger       *slog.Logger
}

// Store is the index: one SQLite file, one writer connection and a pool of
// readers that see WAL snapshots while the writer commits.
type Store struct {
	path           string
	space          vault.EmbeddingSpace
	classifier     Classifier
	frontmatterKey string
	chunking       markdown.ChunkOptions
	log            *slog.Logger

	writer *sql.DB // MaxOpenConns 1: SQLite allows one writer at a time
	reader *sql.DB
	// prepared runs the retrieval path's fixed queries on reader, each
	// prepared once.
	prepared *stmtCache
	lock     *writerLock // held by a writer until Close; nil for a reader

	mu sync.Mutex // serialises Apply and other multi-statement writes

	// changed is poked after a commit that left chunks without vectors, so
	// the vectorizer (package vectorizer) wakes without polling.
	changed chan struct{}

	ftsCounts ftsCounts   // words' row counts for SearchFTS
	members   memberCache // topic notes' members for Hops

	// commitHooks are the caches' after-commit hooks (see afterCommit),
	// registered at Open.
	commitHooks []afterCommit
	// short is the vector shortlist, nil until the first vector search has
	// read it; reading is that read, in the background, guarded by
	// shortMu.
	short   atomic.Pointer[shortlist]
	shortMu sync.Mutex
	reading *routine.Routine
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
// A mismatch returns errEmbeddingMismatch naming both models; Rebuild resets
// it. A writer takes the index's writer lock first: while another process
// holds it, Open fails at once with errLocked naming that process. A reader
// (ReadOnly) takes no lock and opens an index in a directory it may not write
// to as an immutable snapshot.
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
		opts.FrontmatterKey = vault.FrontmatterKey
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
	registerDriver.Do(func() {
		sqlite_vec.Auto()
		sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: setUpConn})
	})

	s := &Store{path: opts.Path, space: opts.Space, classifier: opts.Sensitivity, frontmatterKey: opts.FrontmatterKey, chunking: opts.Chunking, changed: make(chan struct{}, 1), log: opts.Logger.With(logComponent, "index")}
	s.commitHooks = s.hooks()
	if opts.ReadOnly {
		r, err := openReadOnly(ctx, s, opts.Readers)
		if err != nil || opts.AsClassified {
			return r, err
		}
		if err := r.reclassifyFirst(ctx, opts); err != nil {
			r.Close()
			return nil, err
		}
		return r, nil
	}
	if err := checkWritable(opts.Path); err != nil {
		return nil, err
	}
	lock, err := lockWriter(opts.Path)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Store, error) {
		s.closeDBs()
		lock.release()
		return nil, err
	}
	if s.writer, err = openDB(opts.Path, dbWriter); err != nil {
		return fail(err)
	}
	s.writer.SetMaxOpenConns(1)
	if err := migrate(ctx, s.writer); err != nil {
		return fail(fmt.Errorf("open index %s: %w", opts.Path, err))
	}
	if err := s.ensureSpace(ctx, opts.Rebuild); err != nil {
		return fail(err)
	}
	if err := s.ensureVectorLayout(ctx); err != nil {
		return fail(fmt.Errorf("open index %s: %w", opts.Path, err))
	}
	if err := s.ensureClassification(ctx); err != nil {
		return fail(err)
	}
	if err := s.ensureLinkText(ctx); err != nil {
		return fail(fmt.Errorf("open index %s: %w", opts.Path, err))
	}
	if s.reader, err = openDB(opts.Path, dbReader); err != nil {
		return fail(err)
	}
	s.reader.SetMaxOpenConns(opts.Readers)
	s.reader.SetMaxIdleConns(opts.Readers)
	s.prepared = newReadStmts(s.reader)
	if err := s.prepared.prepareInTx(ctx); err != nil {
		return fail(fmt.Errorf("open index %s: %w", opts.Path, err))
	}
	s.lock = lock
	return s, nil
}

// How openDB opens a connection pool.
const (
	dbWriter = iota
	dbReader
	// dbSnapshot reads a file this process may not write to, or whose
	// directory it may not write to (so SQLite can't create the WAL's
	// shared-memory file): SQLite's immutable mode, without locks. Only a
	// writer of another user could change it meanwhile, and the reader
	// then sees the file as it was last checkpointed.
	dbSnapshot
)

func openDB(path string, mode int) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "1")
	switch mode {
	case dbWriter:
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
		q.Set("_txlock", "immediate")
		// Incremental auto-vacuum lets CompactVectors hand freed pages back
		// to the file system; it takes effect only on a new file.
		q.Set("_auto_vacuum", "incremental")
	case dbReader:
		q.Set("mode", "ro")
		q.Set("_query_only", "1")
	case dbSnapshot:
		q.Set("mode", "ro")
		q.Set("immutable", "1")
		q.Set("_query_only", "1")
	}
	db, err := sql.Open(driverName, "file:"+url.PathEscape(path)+"?"+q.Encode())
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
		return nil, fmt.Errorf("open index read-only: %w", describeFSError(err))
	}
	mode := dbReader
	if !writable(filepath.Dir(s.path)) || !writable(s.path) {
		mode = dbSnapshot
	}
	var err error
	if s.reader, err = openDB(s.path, mode); err != nil {
		return nil, err
	}
	// Idle readers stay open, as a writer's do: a connection closed drops
	// the statements prepared on it.
	s.reader.SetMaxOpenConns(readers)
	s.reader.SetMaxIdleConns(readers)
	s.prepared = newReadStmts(s.reader)
	if err := s.checkReadable(ctx); err != nil {
		s.reader.Close()
		return nil, err
	}
	if err := s.prepared.prepareInTx(ctx); err != nil {
		s.prepared.close()
		s.reader.Close()
		return nil, fmt.Errorf("open index %s: %w", s.path, err)
	}
	return s, nil
}

// checkReadable refuses, for a reader, an index whose schema is behind this
// program's or whose vectors are of another embedding space.
func (s *Store) checkReadable(ctx context.Context) error {
	names, err := migrationNames()
	if err != nil {
		return err
	}
	if err := checkNotNewer(ctx, s.reader, names); err != nil {
		return fmt.Errorf("open index %s: %w", s.path, err)
	}
	var applied int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil || applied != len(names) {
		return fmt.Errorf("open index %s read-only: its schema is not current (open it once for writing, e.g. with `vaultask index`, to migrate it)", s.path)
	}
	space, err := storedSpace(ctx, s.reader)
	if err != nil {
		return err
	}
	if space != s.space {
		return s.spaceMismatch(space)
	}
	return nil
}

// storedSpace is the embedding space the index records; zero before its
// first writer.
func storedSpace(ctx context.Context, q querier) (vault.EmbeddingSpace, error) {
	model, _, err := getMeta(ctx, q, "embedding_model")
	if err != nil {
		return vault.EmbeddingSpace{}, err
	}
	dimText, _, err := getMeta(ctx, q, "embedding_dim")
	if err != nil {
		return vault.EmbeddingSpace{}, err
	}
	dim, _ := strconv.Atoi(dimText)
	return vault.EmbeddingSpace{Model: model, Dim: dim}, nil
}

func (s *Store) spaceMismatch(have vault.EmbeddingSpace) error {
	return fmt.Errorf("%w: the index at %s holds vectors of %s (%d dimensions) but the configured embedding model is %s (%d dimensions); run `vaultask index --rebuild` to re-embed every chunk with the configured model",
		errEmbeddingMismatch, s.path, have.Model, have.Dim, s.space.Model, s.space.Dim)
}

// checkWritable explains, before SQLite's terse "unable to open database
// file" can, why a writer cannot use path: a missing directory, or a
// directory or file this user may not write.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: cannot create the index %s: directory %s does not exist", ErrIndexPath, path, dir)
	case err != nil:
		return fmt.Errorf("%w: cannot create the index %s: %w", ErrIndexPath, path, describeFSError(err))
	case !fi.IsDir():
		return fmt.Errorf("%w: cannot create the index %s: %s is not a directory", ErrIndexPath, path, dir)
	case !writable(dir):
		return fmt.Errorf("%w: cannot write the index %s: permission denied: directory %s is not writable by this user (uid %d), and the index keeps its WAL and lock files beside it", ErrIndexPath, path, dir, os.Geteuid())
	}
	if _, err := os.Stat(path); err == nil && !writable(path) {
		return fmt.Errorf("%w: cannot write the index %s: permission denied: the file is not writable by this user (uid %d)", ErrIndexPath, path, os.Geteuid())
	}
	return nil
}

// writable reports whether this process may write path (access(2), so a
// read-only file system counts too).
func writable(path string) bool {
	return unix.Access(path, unix.W_OK) == nil
}

// describeFSError keeps a file-system error's path and cause but says
// "permission denied" in words a user acts on.
func describeFSError(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("permission denied: %w", err)
	}
	return err
}

func (s *Store) closeDBs() error {
	var err error
	if s.prepared != nil {
		err = s.prepared.close()
	}
	if s.reader != nil {
		err = errors.Join(err, s.reader.Close())
	}
	if s.writer != nil {
		err = errors.Join(err, s.writer.Close())
	}
	return err
}

// Close stops a read of the vector shortlist, closes both pools, then
// releases the writer lock, and returns the first error.
func (s *Store) Close() error {
	err := errors.Join(s.closeShortlist(), s.closeDBs())
	lock := s.lock
	s.lock = nil
	return errors.Join(err, lock.release())
}

// Path is the index file's path.
func (s *Store) Path() string { return s.path }

// ensureSpace records the embedding space on first use, creates chunks_vec for
// it, and refuses a different one unless reset is true, in which case every
// vector is dropped and every chunk goes back on the embedding backlog. An
// unchanged space is kept even when reset is true: its vectors are still valid.
func (s *Store) ensureSpace(ctx context.Context, reset bool) error {
	have, err := storedSpace(ctx, s.writer)
	if err != nil {
		return err
	}
	if have.Model != "" && (have == s.space || !reset) {
		if have != s.space {
			return s.spaceMismatch(have)
		}
		return nil
	}
	err = inTx(ctx, s.writer, "create vector table", func(tx *sql.Tx) error {
		for _, q := range []string{`DROP TABLE IF EXISTS chunks_vec`, vecTableDDL(s.space.Dim), `UPDATE chunks SET embedded = 0, staged = NULL`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		if err := bumpVectorsVersion(ctx, tx); err != nil {
			return err
		}
		if err := setMeta(ctx, tx, "embedding_model", s.space.Model); err != nil {
			return err
		}
		return setMeta(ctx, tx, "embedding_dim", strconv.Itoa(s.space.Dim))
	})
	if err != nil {
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

// metaSQL reads one value of meta.
const metaSQL = `SELECT value FROM meta WHERE key = ?`

func getMeta(ctx context.Context, q querier, key string) (string, bool, error) {
	var v string
	err := q.QueryRowContext(ctx, metaSQL, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read meta %s: %w", key, err)
	}
	return v, true, nil
}

func deleteMeta(ctx context.Context, e execer, key string) error {
	if _, err := e.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, key); err != nil {
		return fmt.Errorf("delete meta %s: %w", key, err)
	}
	return nil
}

// countMeta adds one to the counter meta holds under key (1 when it holds
// none yet).
func countMeta(ctx context.Context, e execer, key string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, '1')
		ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`, key)
	if err != nil {
		return fmt.Errorf("count meta %s: %w", key, err)
	}
	return nil
}

func setMeta(ctx context.Context, e execer, key, value string) error {
	_, err := e.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("write meta %s: %w", key, err)
	}
	return nil
}
