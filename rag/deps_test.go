package rag

import (
	"testing"

	"github.com/vaultask/vaultask/internal/deptest"
)

func TestDeps(t *testing.T) {
	t.Parallel()
	deptest.Check(t, "vault", "llm", "internal/clip")
}
