package uselite

import (
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "internal/simd", "internal/modelfetch", "internal/modelfile", "llm/builtin")
}
