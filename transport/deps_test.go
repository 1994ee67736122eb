package transport

import (
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "rag", "static", "transport/allowweb", "transport/mcp", "vault")
}
