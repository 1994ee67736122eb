package index

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// errLocked is returned by Open when another process holds the index for
// writing: two writers would both do all the work and both move the
// checkpoint.
var errLocked = errors.New("index in use by another process")

// writerLock is an exclusive flock(2) on a file beside the index, held for
// as long as a writer has the index open. The kernel drops it when the
// process dies, so a crash never leaves a stale lock behind; the file keeps
// the holder's pid only to name it in the error.
type writerLock struct {
	f *os.File
}

// lockPath is the lock file of the index at path.
func lockPath(path string) string { return path + ".lock" }

// lockWriter takes the writer lock of the index at path, or fails at once
// with errLocked naming the process that holds it.
func lockWriter(path string) (*writerLock, error) {
	lp := lockPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open index %s: lock file: %w", path, describeFSError(err))
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := "another process"
		if b, rerr := os.ReadFile(lp); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
				holder = fmt.Sprintf("another process (pid %d)", pid)
			}
		}
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is open for writing by %s (lock file %s); stop it first, or use a command that only reads, such as ask or stats", errLocked, path, holder, lp)
		}
		return nil, fmt.Errorf("open index %s: lock %s: %w", path, lp, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &writerLock{f: f}, nil
}

// release drops the lock; closing the descriptor releases the flock.
func (l *writerLock) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
