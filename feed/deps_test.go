package feed

import (
	"testing"

	"github.com/vaultask/vaultask/internal/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "index", "vault", "feed/livesync", "internal/retry", "internal/routine")
}
