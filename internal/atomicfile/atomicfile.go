package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data, with permissions perm: a temporary
// file beside it, written and synced, renamed over it, then its directory
// synced, so that after a crash path holds the old data or the new, never
// part of either, and the rename itself is not lost. A failed write
// leaves path as it was and no temporary file behind.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	p, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer p.Abort()
	if _, err := p.Write(data); err != nil {
		return err
	}
	return p.Commit()
}

// Pending is the new content of a file, written to a temporary file beside
// it until Commit puts it in place as WriteFile does: for content too large
// to hold in memory (a model file), or to be checked before it replaces
// the old (its sum).
type Pending struct {
	f    *os.File
	path string
	done bool
}

// Create starts the new content of path, with permissions perm. Write it,
// then Commit or Abort.
func Create(path string, perm fs.FileMode) (*Pending, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &Pending{f: f, path: path}, nil
}

// Write appends b to the new content.
func (p *Pending) Write(b []byte) (int, error) { return p.f.Write(b) }

// Commit syncs the new content and renames it over the file, then syncs
// the directory. On an error the file is as it was and the temporary file
// is gone.
func (p *Pending) Commit() error {
	p.done = true
	err := p.f.Sync()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.f.Name(), p.path)
	}
	if err != nil {
		os.Remove(p.f.Name())
		return err
	}
	if d, err := os.Open(filepath.Dir(p.path)); err == nil {
		_ = d.Sync() // not every file system syncs a directory
		d.Close()
	}
	return nil
}

// Abort drops the new content, leaving the file as it was; after Commit it
// does nothing, so that it can be deferred.
func (p *Pending) Abort() {
	if p.done {
		return
	}
	p.done = true
	p.f.Close()
	os.Remove(p.f.Name())
}
