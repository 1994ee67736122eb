package rag

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/vault"
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
	in := make([]vault.NoteInput, 0, 200)
	for i := range 200 {
		var b strings.Builder
		for range 150 {
			b.WriteString(vocab[r.IntN(len(vocab))])
			b.WriteByte(' ')
		}
		in = append(in, note(fmt.Sprintf("n/%03d.md", i), b.String()))
	}
	return mustPipeline(tb, Options{Searcher: mustIndex(tb, nil, in...).Search(), Embedder: &bagEmbedder{}})
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
	t.Parallel()
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

// A question over a limit is refused before any search, naming the limit
// and the size; the zero Limits are the defaults, not no limit.
func TestRetrieveLimits(t *testing.T) {
	t.Parallel()
	store := mustIndex(t, nil, note("a.md", "# Alpha\n\nlivesync couchdb replication\n"))
	ctx := context.Background()
	small := mustPipeline(t, Options{Searcher: store.Search(), Limits: Limits{QuestionBytes: 100, TranscriptBytes: 300}})
	long := strings.Repeat("livesync ", 12)
	for _, c := range []struct {
		name  string
		p     *Pipeline
		q     Question
		limit string
		size  int
	}{
		{"question", small, Question{Text: long}, "question", len(strings.TrimSpace(long))},
		{"transcript", small, Question{Text: "and couchdb?", History: []Turn{{Role: "user", Text: strings.Repeat("a", 200)}, {Role: "assistant", Text: strings.Repeat("b", 100)}}}, "transcript", 312},
		{"default question", mustPipeline(t, Options{Searcher: store.Search()}), Question{Text: strings.Repeat("x", DefaultQuestionBytes+1)}, "question", DefaultQuestionBytes + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.p.Retrieve(ctx, c.q)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != c.limit || le.Size != c.size {
				t.Fatalf("Retrieve = %v, want a %s LimitError of %d bytes", err, c.limit, c.size)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(le.Max)) || !strings.Contains(err.Error(), fmt.Sprint(c.size)) {
				t.Errorf("error %q names neither the limit nor the size", err)
			}
		})
	}
	if _, err := small.Retrieve(ctx, Question{Text: "couchdb"}); err != nil {
		t.Fatalf("a question within the limits: %v", err)
	}
}

// Without a model the rewrite joins earlier turns only while the text
// searched stays within the question limit.
func TestConcatTurnsWithinLimit(t *testing.T) {
	t.Parallel()
	q := Question{Text: "and couchdb?", History: []Turn{{Role: "user", Text: "livesync setup"}, {Role: "user", Text: strings.Repeat("log line ", 20)}}}
	if got := concatTurns(q, 100); got != "and couchdb?" {
		t.Errorf("concatTurns over 100 bytes = %q, want the question alone", got)
	}
	q.History = q.History[:1]
	if got := concatTurns(q, 100); got != "livesync setup and couchdb?" {
		t.Errorf("concatTurns = %q", got)
	}
}
