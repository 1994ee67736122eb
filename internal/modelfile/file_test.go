package modelfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t) }

// content is a model file of several pages, so that a read past a cut
// falls on a page the file no longer has.
var content = bytes.Repeat([]byte("0123456789abcdef"), 4096)

// loaded is content installed in a temporary directory as name, opened
// and loaded.
func loaded(t *testing.T) (*File, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "w.bin")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := sumsOf(t, map[string]string{"w.bin": string(content)}).Open(dir, "w.bin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var parsed []byte
	if err := f.Load(func(data []byte) error { parsed = bytes.Clone(data); return nil }); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(parsed, content) {
		t.Fatal("Load parsed other bytes than the file's")
	}
	return f, path
}

// rewrite writes b over the file at path in place, as cp does (truncate,
// then write), and gives it a modification time of its own: a file is told
// from the one checked by its size and modification time, and two writes
// in a row may fall on one tick of the file system's clock.
func rewrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ticks++
	at := time.Unix(1e9+ticks, 0)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

var ticks int64

// readsContent reads a row at the end of the file, within a Guard.
func readsContent(f *File) error {
	return f.Guard(func() error {
		row := make([]byte, 16)
		if _, err := f.ReadAt(row, int64(len(content)-16)); err != nil {
			return err
		}
		if !bytes.Equal(row, content[len(content)-16:]) {
			return errors.New("read another row")
		}
		return nil
	})
}

func TestLoad(t *testing.T) {
	f, _ := loaded(t)
	if err := readsContent(f); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := sumsOf(t, map[string]string{"w.bin": "x"}).Open(dir, "w.bin"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
}

// A file that is not the pinned one fails Load whatever parse made of it;
// so does an empty one.
func TestLoadMismatch(t *testing.T) {
	dir := t.TempDir()
	for _, file := range [][]byte{append(bytes.Clone(content[:len(content)-1]), 'X'), nil} {
		if err := os.WriteFile(filepath.Join(dir, "w.bin"), file, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := sumsOf(t, map[string]string{"w.bin": string(content)}).Open(dir, "w.bin")
		if err != nil {
			t.Fatal(err)
		}
		err = f.Load(func([]byte) error { return nil })
		f.Close()
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), filepath.Join(dir, "w.bin")+" does not match its pinned sum: its sha256 is ") {
			t.Errorf("Load(%d bytes not the pinned ones) = %v, want ErrMismatch naming the file", len(file), err)
		}
	}
}

// A file cut short while the model loads from its mapping faults the read
// past the cut: Load returns an error, and the process lives on.
func TestLoadCutShortWhileLoading(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.bin")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := sumsOf(t, map[string]string{"w.bin": string(content)}).Open(dir, "w.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last byte
	err = f.Load(func(data []byte) error {
		if err := os.Truncate(path, 100); err != nil {
			return err
		}
		last = data[len(data)-1]
		return nil
	})
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "while it loaded") {
		t.Errorf("Load of a file cut short under it = %v (read %q), want ErrChanged", err, last)
	}
}

// A loaded file rewritten in place is never read from until it is the
// pinned file again; one replaced by a rename goes on being read from
// the file loaded, until the file read from changes.
func TestRewrittenUnderTheModel(t *testing.T) {
	f, path := loaded(t)
	calls := 0
	counted := func() error { calls++; return readsContent(f) }

	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	row := make([]byte, 16)
	if _, err := f.ReadAt(row, int64(len(content)-16)); !errors.Is(err, ErrChanged) {
		t.Errorf("ReadAt past the cut = %v, want ErrChanged", err)
	}
	for range 2 {
		if err := f.Guard(counted); !errors.Is(err, ErrChanged) || !errors.Is(err, ErrMismatch) {
			t.Errorf("Guard on the truncated file = %v, want ErrChanged and ErrMismatch", err)
		}
	}
	if calls != 0 {
		t.Errorf("Guard ran its function %d times on a truncated file", calls)
	}

	// cp of the right file over it, in place: read from again.
	rewrite(t, path, content)
	if err := f.Guard(counted); err != nil || calls != 1 {
		t.Errorf("Guard after the file is restored = %v (%d calls)", err, calls)
	}

	// Overwritten in place with other bytes of the same size.
	other := bytes.ToUpper(content)
	rewrite(t, path, other)
	if err := f.Guard(counted); !errors.Is(err, ErrMismatch) || calls != 1 {
		t.Errorf("Guard on a file overwritten in place = %v (%d calls), want ErrMismatch", err, calls)
	}

	// The right file renamed over it: read from.
	rename := func(b []byte) {
		t.Helper()
		tmp := path + ".tmp"
		rewrite(t, tmp, b)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	rename(content)
	if err := f.Guard(counted); err != nil || calls != 2 {
		t.Errorf("Guard after the right file is renamed over the damaged one = %v (%d calls)", err, calls)
	}
	// Another file renamed over it: the file open is still the right one.
	rename(other)
	if err := f.Guard(counted); err != nil || calls != 3 {
		t.Errorf("Guard after another file is renamed over the path = %v (%d calls), want the open file read", err, calls)
	}
}

// A file rewritten while a call reads it makes the call run again, once.
func TestGuardRunsAgainAfterAChange(t *testing.T) {
	f, path := loaded(t)
	calls := 0
	rewrite := func(times int) func() error {
		return func() error {
			calls++
			if calls <= times {
				rewrite(t, path, content)
			}
			return nil
		}
	}
	if err := f.Guard(rewrite(1)); err != nil || calls != 2 {
		t.Errorf("Guard with the file rewritten during the first call = %v (%d calls), want 2 calls", err, calls)
	}
	calls = 0
	if err := f.Guard(rewrite(2)); !errors.Is(err, ErrChanged) || calls != 2 {
		t.Errorf("Guard with the file rewritten during both calls = %v (%d calls), want ErrChanged after 2", err, calls)
	}
	if err := readsContent(f); err != nil {
		t.Error(err)
	}
}

func TestOffset(t *testing.T) {
	data := make([]byte, 100)
	if got := Offset(data, data[40:60][5:]); got != 45 {
		t.Errorf("Offset = %d, want 45", got)
	}
}

func TestGuardNil(t *testing.T) {
	var f *File
	ran := false
	if err := f.Guard(func() error { ran = true; return nil }); err != nil || !ran {
		t.Errorf("Guard on a nil File = %v, ran %v", err, ran)
	}
}
