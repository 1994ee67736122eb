package main

import (
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "config", "eval", "feed", "index", "internal/atomicfile", "internal/ragconfig", "llm", "rag", "rag/web", "transport", "static", "vault", "vectorizer")
}
