package modelfile

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	sha256 map[string]string // hex, by installed file name
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
		case algo != "SHA256":
			return Sums{}, fmt.Errorf("checksums line %d: %s has a %s sum; an installed file's is SHA256", n, name, algo)
		default:
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
	if err := mismatch(sha256.Sum256(data), s.pinned(name)); err != nil {
		return fmt.Errorf("%s %w", path, err)
	}
	return nil
}

// mismatch is nil when sum is want (hex), else an error wrapping
// ErrMismatch that gives both.
func mismatch(sum [sha256.Size]byte, want string) error {
	if got := hex.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("%w: its sha256 is %s, pinned %s", ErrMismatch, got, want)
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
