package main

import (
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) {
	deptest.Check(t, "cmd/ragconfig", "config", "eval", "feed", "index", "internal/atomicfile", "llm", "rag", "rag/web", "transport", "transport/mcp", "static", "vault", "vectorizer")
}
