package modeldir

import (
	"os"
	"path/filepath"
)

// Base is the directory of the built-in models by default:
// ${XDG_CACHE_HOME:-$HOME/.cache}/vaultask, on every system.
func Base() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "vaultask")
}
