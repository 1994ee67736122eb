package modeldir

import (
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t) }

// XDG_CACHE_HOME names the cache when set; else it is ~/.cache.
func TestBase(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got, want := Base(), "/x/cache/vaultask"; got != want {
		t.Errorf("Base() = %q, want %q", got, want)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got, want := Base(), "/home/u/.cache/vaultask"; got != want {
		t.Errorf("Base() = %q, want %q", got, want)
	}
}
