package web

import (
	"testing"

	"github.com/vaultask/vaultask/internal/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t, "internal/clip") }
