package llm

import (
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "llm/builtin", "llm/uselite", "llm/e5", "llm/bge")
}
