package mmapfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t) }

func TestMap(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	want := []byte("some model bytes")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("Map read %q, want %q", data, want)
	}
	// Released pages read as before: the file's bytes come back.
	if err := Release(data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("after Release the mapping reads %q, want %q", data, want)
	}
	if err := unmap(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Map(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Map(missing) = %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Map(path); !errors.Is(err, ErrEmpty) {
		t.Errorf("Map(empty) = %v, want ErrEmpty", err)
	}
}
