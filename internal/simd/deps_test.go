package simd

import (
	"testing"

	"github.com/vaultask/vaultask/internal/testsupport/deptest"
)

func TestDeps(t *testing.T) {
	t.Parallel()
	deptest.Check(t)
}
