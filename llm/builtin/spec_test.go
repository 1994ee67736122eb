package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/internal/modelfile"
	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "internal/modelfetch", "internal/modelfile", "llm/internal/bert")
}

// XDG_CACHE_HOME names the cache when set; else it is ~/.cache.
func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got, want := DefaultDir(), "/x/cache/vaultask"; got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got, want := DefaultDir(), "/home/u/.cache/vaultask"; got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
}

var testSpec = Spec{
	Name:  "tiny",
	ID:    "builtin/tiny",
	Dir:   "tiny-1.0",
	Sums:  modelfile.MustParse(fmt.Sprintf("SHA256 (tiny.jar) = %s\nSHA256 (tiny.bin) = %s\n", strings.Repeat("0a", 32), strings.Repeat("0b", 32))),
	Files: []string{"tiny.bin"},
}

// A model is looked for in its folder of the built-in models' directory,
// or in the directory itself when its first file lies there.
func TestIn(t *testing.T) {
	builtinDir := t.TempDir()
	if got, want := testSpec.In(builtinDir), filepath.Join(builtinDir, "tiny-1.0"); got != want {
		t.Errorf("In(a directory of folders) = %s, want %s", got, want)
	}
	if err := os.WriteFile(filepath.Join(builtinDir, "tiny.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := testSpec.In(builtinDir); got != builtinDir {
		t.Errorf("In(a directory holding the model's file) = %s, want it", got)
	}
}

// The load errors say what is wrong and, for a missing or damaged file,
// how to fetch it into the directory it was looked for in.
func TestLoadError(t *testing.T) {
	dir := filepath.Join("/models", "tiny-1.0")
	tests := []struct {
		err  error
		is   error
		want string
	}{
		{fs.ErrNotExist, ErrModelNotFound, "tiny: model file not found: /models/tiny-1.0/tiny.bin (run vaultask fetch-model --dir /models tiny)"},
		{fmt.Errorf("/models/tiny-1.0/tiny.bin %w", modelfile.ErrMismatch), modelfile.ErrMismatch, "tiny: /models/tiny-1.0/tiny.bin does not match its pinned sum: damaged, or not the file the fetch installs (run vaultask fetch-model --dir /models tiny to fetch it again)"},
		{errors.New("bad magic"), nil, "tiny: /models/tiny-1.0/tiny.bin: bad magic"},
	}
	for _, tt := range tests {
		err := testSpec.LoadError(dir, "tiny.bin", tt.err)
		if err.Error() != tt.want || tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("LoadError(%v) = %v, want %q wrapping %v", tt.err, err, tt.want, tt.is)
		}
	}
	if got, want := testSpec.FetchCommand("/elsewhere"), "vaultask fetch-model --dir /elsewhere tiny"; got != want {
		t.Errorf("FetchCommand(a directory holding the files) = %q, want %q", got, want)
	}
	if _, err := testSpec.Load("", Options{}); err == nil {
		t.Error("Load with no directory: no error")
	}
}

// A load's error comes back as a nil Model, not a nil *Encoder in one.
func TestOpener(t *testing.T) {
	s := testSpec
	s.Open = Opener(func(*Spec, string, Options) (*Encoder, error) { return nil, errors.New("bad magic") })
	if m, err := s.Load("/models/tiny-1.0", Options{}); m != nil || err == nil {
		t.Errorf("Load = %v, %v; want a nil Model and the error", m, err)
	}
}
