package e5

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "internal/simd", "internal/mmapfile", "internal/modeldir", "llm/internal/bert")
}

// modelDir is where the tests look for the model: its folder in the
// built-in models' directory VAULTASK_MODELS__BUILTIN_DIR names (where
// scripts/fetch-model.sh puts it), else DefaultDir.
func modelDir() string {
	if d := os.Getenv("VAULTASK_MODELS__BUILTIN_DIR"); d != "" {
		return filepath.Join(d, DirName)
	}
	return DefaultDir()
}

var loadShared = sync.OnceValues(func() (*Model, error) { return Load(modelDir(), Options{}) })

// mustModel returns the model shared by the tests. Without the model file
// it skips, naming the script that fetches it, unless
// VAULTASK_REQUIRE_MODELS=1 (scripts/test.sh sets it), where it fails.
func mustModel(tb testing.TB) *Model {
	tb.Helper()
	m, err := loadShared()
	if errors.Is(err, ErrModelNotFound) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1" {
		tb.Skipf("%v; scripts/fetch-model.sh fetches it", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return m
}
