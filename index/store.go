package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
	"github.com/mattn/go-sqlite3"
	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/vault"
)

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
	Rebuild  bool // drop every vector: the index is embedded anew in Space
	// ReadOnly opens an existing index without a writer: no migration runs
	// and every write method returns errReadOnly. An index classified with
	// other sensitivity settings is reclassified first, through a writer
	// opened for that alone, unless AsClassified.
	ReadOnly bool
	// AsClassified reads the index as it was classified, whatever the
	// settings: a dry run that reports what reclassifying would change.
	AsClassified bool
	// ConnIdle is how long a connection may stay unused before it is
	// closed (default connIdle; see there).
	ConnIdle time.Duration
	Logger   *slog.Logger
}

// withDefaults validates o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Path == "" {
		return o, errors.New("open index: empty path")
	}
	if o.Space.Model == "" || o.Space.Dim <= 0 {
		return o, fmt.Errorf("open index: embedding space needs a model and a positive dimension, got %q/%d", o.Space.Model, o.Space.Dim)
	}
	if err := o.Sensitivity.Validate(); err != nil {
		return o, fmt.Errorf("open index: %w", err)
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	if o.ConnIdle <= 0 {
		o.ConnIdle = connIdle
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FrontmatterKey == "" {
		o.FrontmatterKey = vault.FrontmatterKey
	}
	def := markdown.DefaultChunkOptions()
	if o.Chunking.TargetTokens <= 0 {
		o.Chunking.TargetTokens = def.TargetTokens
	}
	if o.Chunking.MinTokens <= 0 {
		o.Chunking.MinTokens = def.MinTokens
	}
	if o.Chunking.MaxTokens <= 0 {
		o.Chunking.MaxTokens = def.MaxTokens
	}
	return o, nil
}

// Store is the index: one SQLite file, one writer connection and a pool of
// readers that see WAL snapshots while the writer commits. Its consumers
// read and write it through its faces (below): Feed, Search, Browse and
// Vectors.
type Store struct {
	path string
	// space is the configured embedding space: the index's target, which
	// it re-embeds into when it holds another (see vectors_spaces.go).
	space          vault.EmbeddingSpace
	classifier     Classifier
	frontmatterKey string
	chunking       markdown.ChunkOptions
	log            *slog.Logger
	connIdle       time.Duration

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

	// The caches, each on commitHooks (see afterCommit).
	ftsCounts ftsCounts   // words' row counts for SearchFTS
	members   memberCache // topic notes' members for Hops
	sets      vectorSets  // each embedding space's vectors in memory
	// commitHooks are the caches' after-commit hooks, registered at Open.
	commitHooks []afterCommit

	// spaceState is which embedding spaces the index holds (see
	// vectors_spaces.go), replaced whole when they change.
	spaceState atomic.Pointer[spaceState]
}

func (s *Store) signalChanged() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Open opens (creating if needed) the index at opts.Path, applies pending
// migrations and makes opts.Space the space it embeds into: an index of
// another space is re-embedded in the background while its searches go on
// in the old one (see vectors_spaces.go); Rebuild drops every vector
// instead. A writer takes the index's writer lock first: while another
// process holds it, Open fails at once with errLocked naming that process.
// A reader (ReadOnly) takes no lock and opens an index in a directory it may
// not write to as an immutable snapshot.
func Open(ctx context.Context, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	registerDriver.Do(func() {
		sqlite_vec.Auto() // for migration 0014 alone (vec0Table)
		sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: setUpConn})
	})
	s := &Store{path: opts.Path, space: opts.Space, classifier: opts.Sensitivity, frontmatterKey: opts.FrontmatterKey,
		chunking: opts.Chunking, connIdle: opts.ConnIdle, changed: make(chan struct{}, 1), log: opts.Logger.With(logComponent, "index")}
	s.commitHooks = s.hooks()
	if opts.ReadOnly {
		return s.openReader(ctx, opts)
	}
	return s.openWriter(ctx, opts)
}

// openReader opens s read-only, reclassified first unless opts says to
// read it as it was classified.
func (s *Store) openReader(ctx context.Context, opts Options) (*Store, error) {
	if err := s.openReadOnly(ctx, opts.Readers); err != nil {
		return nil, err
	}
	if opts.AsClassified {
		return s, nil
	}
	if err := s.reclassifyFirst(ctx, opts); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openWriter takes the writer lock, then opens the file for writing and
// brings it up to date (prepareFile).
func (s *Store) openWriter(ctx context.Context, opts Options) (*Store, error) {
	if err := checkWritable(s.path); err != nil {
		return nil, err
	}
	lock, err := lockWriter(s.path)
	if err != nil {
		return nil, err
	}
	if err := s.prepareFile(ctx, opts); err != nil {
		s.closeDBs()
		lock.release()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

// prepareFile opens the writer connection, brings the file up to date, a
// step at a time, and opens the readers.
func (s *Store) prepareFile(ctx context.Context, opts Options) error {
	var err error
	if s.writer, err = s.openPool(dbWriter); err != nil {
		return err
	}
	s.writer.SetMaxOpenConns(1)
	steps := []func(ctx context.Context) error{
		s.migrate,
		func(ctx context.Context) error { return s.ensureSpace(ctx, opts.Rebuild) },
		s.ensureClassification,
		s.ensureLinkText,
		func(ctx context.Context) error { return s.openReaders(ctx, opts.Readers) },
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// migrate applies the migrations the file lacks, then gives back to the
// file system the pages they freed.
func (s *Store) migrate(ctx context.Context) error {
	if err := migrate(ctx, s.writer); err != nil {
		return fmt.Errorf("open index %s: %w", s.path, err)
	}
	// The pragma frees a page each step: Exec would take one step.
	rows, err := s.writer.QueryContext(ctx, `PRAGMA incremental_vacuum`)
	if err == nil {
		for rows.Next() {
		}
		err = errors.Join(rows.Err(), rows.Close())
	}
	if err != nil {
		return fmt.Errorf("open index %s: vacuum: %w", s.path, err)
	}
	return nil
}

// openReaders opens a writer's reader pool and prepares its statements.
func (s *Store) openReaders(ctx context.Context, readers int) error {
	var err error
	if s.reader, err = s.openPool(dbReader); err != nil {
		return err
	}
	s.reader.SetMaxOpenConns(readers)
	s.reader.SetMaxIdleConns(readers)
	s.prepared = newReadStmts(s.reader)
	if err := s.prepared.prepareInTx(ctx); err != nil {
		return fmt.Errorf("open index %s: %w", s.path, err)
	}
	return nil
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

// Close stops the reads of vector sets under way, closes both pools, then
// releases the writer lock, and returns the first error.
func (s *Store) Close() error {
	err := errors.Join(s.closeSets(), s.closeDBs())
	lock := s.lock
	s.lock = nil
	return errors.Join(err, lock.release())
}

// Path is the index file's path.
func (s *Store) Path() string { return s.path }

// The Store's faces, one per consumer: each a small type over the same
// Store, its writer and its readers, with the methods that consumer needs
// (as wtf's DialService is over its one DB). Their files carry their name.

// Feed is the index as a source writes it (package feed, and `vaultask
// index` through it): batches of notes applied with the source's
// checkpoint in one transaction, the plan and the run of a full sync, the
// reclassification that ends one, the notes the source parks, and when it
// last ran. Its writes go through the store's one writer.
type Feed struct{ db *Store }

// Feed returns the index as a source writes it.
func (s *Store) Feed() *Feed { return &Feed{db: s} }

// Search is the index as retrieval reads it (package rag, through its
// Searcher): full-text and vector search, the notes around those found,
// the distance bounds that decide which of them to read, and the word
// counts the coverage judgement weighs. Every method applies the scope
// inside its query, before any k or limit.
type Search struct{ db *Store }

// Search returns the index as retrieval reads it.
func (s *Store) Search() *Search { return &Search{db: s} }

// Browse is the index as a reader browses it (the MCP tools and resources,
// through mcp.Notes): a note by name, its text, its neighbours, the topics
// and the list of notes. Every method applies the scope inside its
// queries.
type Browse struct{ db *Store }

// Browse returns the index as a reader browses it.
func (s *Store) Browse() *Browse { return &Browse{db: s} }

// Vectors is the index as the embedder fills it (package vectorizer): the
// chunks waiting for a vector, in the space the index embeds into and,
// while it re-embeds, in the one it searches; the vectors handed back; the
// switch to a space once it is filled; and the signal that more wait.
type Vectors struct{ db *Store }

// Vectors returns the index as the embedder fills it.
func (s *Store) Vectors() *Vectors { return &Vectors{db: s} }
