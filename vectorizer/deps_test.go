package vectorizer

import (
	"testing"

	"github.com/vaultask/vaultask/internal/testsupport/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "index", "internal/retry", "internal/routine")
}
