package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mattn/go-sqlite3"
)

// How the index file is opened: the driver, the connections' settings, and
// why a file cannot be.

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

// connIdle is how long a connection of either pool may stay unused before
// it is closed, and its mapping of the file with it (see mmapSize): the
// pages a connection mapped stay in the process's resident set for as long
// as it is open, and over a burst of questions each reader maps most of the
// file (on the hub index, 166 MB a connection: serve's RSS 236 MB idle,
// 790 MB after 15 s of four clients searching, and still 749 MB a minute
// later). A connection opened again maps only what it reads; the first
// question after a pause pays for the open and for preparing its
// statements again (database/sql prepares a pool's statements anew on a
// new connection): on the hub index a question's reads took 12 ms of CPU
// on an open connection, 14–15.5 ms on a new one.
const connIdle = 5 * time.Second

// openPool opens a connection pool on s's file in mode whose connections
// close after s.connIdle unused.
func (s *Store) openPool(mode int) (*sql.DB, error) {
	db, err := openDB(s.path, mode)
	if err != nil {
		return nil, err
	}
	db.SetConnMaxIdleTime(s.connIdle)
	return db, nil
}

func openDB(path string, mode int) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "1")
	switch mode {
	case dbWriter:
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
		q.Set("_txlock", "immediate")
		// Incremental auto-vacuum lets the index hand freed pages back to
		// the file system (as it does after moving its vectors out of
		// sqlite-vec); it takes effect only on a new file.
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

// openReadOnly opens s's reader pool on an existing file, as an immutable
// snapshot when this process may not write the file or its directory, and
// checks that it may read it.
func (s *Store) openReadOnly(ctx context.Context, readers int) error {
	if _, err := os.Stat(s.path); err != nil {
		return fmt.Errorf("open index read-only: %w", describeFSError(err))
	}
	mode := dbReader
	if !writable(filepath.Dir(s.path)) || !writable(s.path) {
		mode = dbSnapshot
	}
	var err error
	if s.reader, err = s.openPool(mode); err != nil {
		return err
	}
	// Readers between questions stay open until connIdle: a connection
	// closed drops the statements prepared on it.
	s.reader.SetMaxOpenConns(readers)
	s.reader.SetMaxIdleConns(readers)
	s.prepared = newReadStmts(s.reader)
	if err := s.checkReadable(ctx); err != nil {
		s.reader.Close()
		return err
	}
	if err := s.prepared.prepareInTx(ctx); err != nil {
		s.prepared.close()
		s.reader.Close()
		return fmt.Errorf("open index %s: %w", s.path, err)
	}
	return nil
}

// checkReadable refuses, for a reader, an index whose schema is behind this
// program's or which no writer has given an embedding space yet, and reads
// the spaces it holds: a reader searches the active one, whatever space
// it was configured with (a writer re-embeds into that).
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
	if err := s.loadSpaces(ctx, s.reader); err != nil {
		return err
	}
	if s.spaces().active.id == 0 {
		return fmt.Errorf("open index %s read-only: %w", s.path, errNoSpace)
	}
	return nil
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
