package bge

import "testing"

// BenchmarkTokenize encodes a note of about 2,000 tokens: the golden text
// nearest that size.
func BenchmarkTokenize(b *testing.B) {
	tok := mustTokenizer(b)
	best, text := 0, ""
	for _, gt := range mustGolden(b) {
		if abs(len(gt.tokens)-2000) < abs(best-2000) {
			best, text = len(gt.tokens), gt.text
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
