package bge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/tstest/corpustext"
)

// BenchmarkTokenize encodes a note of about 2,000 tokens: the golden text
// nearest that size when the corpus is there, else a mixed text as long.
func BenchmarkTokenize(b *testing.B) {
	tok := mustTokenizer(b)
	text := strings.Repeat("Héllo, wörld! The quick brown fox (https://example.com/a?b=c) jumps over 日本語 `code` | a | b |\n", 55)
	if _, err := os.Stat(filepath.Join(corpustext.Dir(), "hub.all_docs.json.gz")); err == nil {
		g, err := loadGolden()
		if err != nil {
			b.Fatal(err)
		}
		best := 0
		for _, gt := range g {
			if abs(len(gt.tokens)-2000) < abs(best-2000) {
				best, text = len(gt.tokens), gt.text
			}
		}
	}
	n := len(tok.encode(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		tok.encode(text)
	}
	b.ReportMetric(float64(n), "tokens/op")
}

func abs(x int) int { return max(x, -x) }
