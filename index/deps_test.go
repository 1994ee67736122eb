package index

import (
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "vault", "index/markdown", "index/vectorset", "internal/routine")
}
