package vectorset

import (
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	t.Parallel()
	deptest.Check(t, "internal/simd")
}
