package rag

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/index"
)

// longWords is a vocabulary of made-up words, most of them in no note, as
// a pasted log or document brings words the vault has never seen.
func longWords(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for range 4 + r.IntN(6) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		out[i] = b.String()
	}
	return out
}

// longQuestion is about size bytes of words drawn from vocab.
func longQuestion(size int, vocab []string) string {
	r := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(vocab[r.IntN(len(vocab))])
		b.WriteByte(' ')
	}
	return b.String()
}

// longIndex is a pipeline over a small real index of 200 notes whose words
// come from vocab.
func longIndex(tb testing.TB, vocab []string) *Pipeline {
	r := rand.New(rand.NewPCG(5, 6))
	in := make([]index.NoteInput, 0, 200)
	for i := range 200 {
		var b strings.Builder
		for range 150 {
			b.WriteString(vocab[r.IntN(len(vocab))])
			b.WriteByte(' ')
		}
		in = append(in, note(fmt.Sprintf("n/%03d.md", i), b.String()))
	}
	return mustPipeline(tb, Options{Searcher: mustIndex(tb, nil, in...), Embedder: &bagEmbedder{}})
}

func BenchmarkRetrieveLongQuestion(b *testing.B) {
	vocab := longWords(20000)
	p := longIndex(b, vocab)
	for _, size := range []int{8 << 10, 60 << 10, 200 << 10} {
		q := Question{Text: longQuestion(size, vocab)}
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			for b.Loop() {
				if _, err := p.Retrieve(context.Background(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A pasted text's full-text query keeps a bounded number of words, those it
// repeats most, whatever its length: FTS5's cost is terms × matching rows.
func TestFTSTextLongQuestion(t *testing.T) {
	vocab := longWords(5000)
	q := longQuestion(60<<10, vocab) + strings.Repeat("livesync ", 40) + strings.Repeat("couchdb ", 30)
	words := strings.Fields(FTSText(q))
	if len(words) > maxFTSTerms {
		t.Fatalf("FTSText of a 60 KB question has %d words, want at most %d", len(words), maxFTSTerms)
	}
	for _, w := range []string{"livesync", "couchdb"} {
		if !slices.Contains(words, w) {
			t.Errorf("FTSText dropped %q, the question's most repeated word: %v", w, words)
		}
	}
}
