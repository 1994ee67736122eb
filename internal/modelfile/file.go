package modelfile

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
)

// ErrChanged is wrapped by the errors of a model file rewritten in place
// since (or while) the model loaded from it.
var ErrChanged = errors.New("changed under the running process")

// File is an installed model file the model keeps reading after it loads:
// its bytes are mapped only for the load (Load), then a row is read at a
// time (ReadAt) within a Guard. It is safe for concurrent use.
type File struct {
	path string
	want string // the pinned sha256, hex
	mu   sync.RWMutex
	f    *os.File
	seen stamp  // f's size and modification time when it was checked
	gen  uint64 // bumped each time a rewritten file is read from anew
	// bad is the file at path when a check last refused it, badErr that
	// refusal: a file is hashed once per change, not once per call.
	bad    fs.FileInfo
	badErr error
}

// stamp is what tells a file rewritten in place from the one checked:
// its size and modification time.
type stamp struct{ size, mod int64 }

func stampOf(fi fs.FileInfo) stamp { return stamp{fi.Size(), fi.ModTime().UnixNano()} }

// Open opens the installed file name in dir, to be checked against its
// pinned sum as the model loads from it (Load).
func (s Sums) Open(dir, name string) (*File, error) {
	want := s.pinned(name)
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{path: path, want: want, f: f, seen: stampOf(fi)}, nil
}

// Load runs parse on the file's bytes, mapped read-only for the call,
// while the file is hashed beside it (read, on another core while parse
// takes this one: hashing through the mapping would make every page of it
// resident at once), then unmaps them. Whatever parse returned, it fails
// when the file does not match its pinned sum (ErrMismatch) or changed
// while it loaded (ErrChanged): what parse built from such bytes must not
// be used. A read of the mapping that faults, the file cut short under it,
// is such an error, not a crash. parse must not keep data: the rows the
// model leaves on disk it reads with ReadAt.
func (f *File) Load(parse func(data []byte) error) error {
	data, unmap, err := mapFile(f.f, f.seen.size)
	if err != nil {
		return err
	}
	hashed := make(chan hashResult, 1)
	go func() { hashed <- hashFile(f.f, f.seen.size) }()
	perr := noFault(func() error { return parse(data) })
	h := <-hashed
	uerr := unmap()
	fi, serr := f.f.Stat()
	switch {
	case h.err != nil:
		return fmt.Errorf("%s %w while it loaded: %w", f.path, ErrChanged, h.err)
	case serr != nil:
		return serr
	case stampOf(fi) != f.seen:
		return fmt.Errorf("%s %w while it loaded", f.path, ErrChanged)
	}
	if err := mismatch("sha256", h.sum[:], f.want); err != nil {
		return fmt.Errorf("%s %w", f.path, err)
	}
	if perr != nil {
		return perr
	}
	return uerr
}

type hashResult struct {
	sum [sha256.Size]byte
	err error
}

// hashFile hashes the size bytes of f with pread, leaving its offset be,
// a MiB a read.
func hashFile(f *os.File, size int64) (h hashResult) {
	d := sha256.New()
	n, err := io.CopyBuffer(d, io.NewSectionReader(f, 0, size), make([]byte, 1<<20))
	switch {
	case err != nil:
		h.err = err
	case n != size:
		h.err = fmt.Errorf("read %d of its %d bytes", n, size)
	}
	h.sum = [sha256.Size]byte(d.Sum(nil))
	return h
}

// noFault runs fn with a fault on a bad address (a read of a mapping past
// the end of the file cut short under it) turned into an error instead of
// the crash it is by default (debug.SetPanicOnFault), for this goroutine.
func noFault(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		e, ok := r.(interface{ Addr() uintptr })
		if !ok {
			panic(r)
		}
		err = fmt.Errorf("a read of the mapped file faulted at %#x", e.Addr())
	}()
	return fn()
}

// Offset is where sub, a slice of the bytes Load gave parse, starts in
// the file: a slice's capacity runs to the end of the array it slices.
func Offset(data, sub []byte) int64 { return int64(cap(data) - cap(sub)) }

// ReadAt reads len(p) bytes at off from the file the model loaded, or
// from the same file rewritten and checked since (Guard). A read cut
// short, the file truncated under the process, is an error wrapping
// ErrChanged.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	f.mu.RLock()
	n, err := f.f.ReadAt(p, off)
	f.mu.RUnlock()
	if n < len(p) {
		return n, fmt.Errorf("%s %w: %d bytes at offset %d: %w", f.path, ErrChanged, len(p), off, err)
	}
	return n, nil
}

// Guard runs fn, which reads with ReadAt, between two checks that the
// file is the one loaded: unchanged since, or rewritten in place and
// matching its sum again, and then read from anew. A file that changed
// while fn ran may have been read half-written, so fn runs once more. A
// file that does not match its sum fails the call (ErrChanged and
// ErrMismatch) until it does again; each version of it is hashed once.
// Guard on a nil File runs fn alone: a model read from bytes in memory
// has no file to check.
func (f *File) Guard(fn func() error) error {
	if f == nil {
		return fn()
	}
	for try := 0; ; try++ {
		gen, err := f.check()
		if err != nil {
			return err
		}
		err = fn()
		after, cerr := f.check()
		switch {
		case cerr != nil:
			return cerr
		case after == gen:
			return err
		case try > 0:
			return fmt.Errorf("%s %w twice during one call", f.path, ErrChanged)
		}
	}
}

// check makes sure the file read from is the one checked, and returns its
// generation.
func (f *File) check() (uint64, error) {
	f.mu.RLock()
	fi, err := f.f.Stat()
	gen, same := f.gen, err == nil && stampOf(fi) == f.seen
	f.mu.RUnlock()
	if same {
		return gen, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	err = f.reopen()
	return f.gen, err
}

// reopen, with f.mu held, reads from the file now at the path from here
// on once it matches its sum: the one read from was rewritten in place.
func (f *File) reopen() error {
	if fi, err := f.f.Stat(); err == nil && stampOf(fi) == f.seen {
		return nil // another call reopened it meanwhile
	}
	nf, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("%s %w, and cannot be opened again: %w", f.path, ErrChanged, err)
	}
	fi, err := nf.Stat()
	if err != nil {
		nf.Close()
		return err
	}
	if f.bad != nil && os.SameFile(fi, f.bad) && stampOf(fi) == stampOf(f.bad) {
		nf.Close()
		return f.badErr
	}
	if err := f.verify(nf, fi); err != nil {
		nf.Close()
		return err
	}
	f.f.Close()
	f.f, f.seen, f.bad, f.badErr = nf, stampOf(fi), nil, nil
	f.gen++
	return nil
}

// verify hashes nf, read, never mapped, so that a file cut short meanwhile
// is only a short read.
func (f *File) verify(nf *os.File, opened fs.FileInfo) error {
	h := hashFile(nf, opened.Size())
	if h.err != nil {
		return fmt.Errorf("%s %w, and cannot be read again: %w", f.path, ErrChanged, h.err)
	}
	fi, err := nf.Stat()
	if err != nil || stampOf(fi) != stampOf(opened) {
		return fmt.Errorf("%s %w, and is being written", f.path, ErrChanged)
	}
	if err := mismatch("sha256", h.sum[:], f.want); err != nil {
		f.bad, f.badErr = opened, fmt.Errorf("%s %w since the model loaded, and %w", f.path, ErrChanged, err)
		return f.badErr
	}
	return nil
}

// Close closes the file. The File must not be used afterwards.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.Close()
}
