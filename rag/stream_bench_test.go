package rag

import (
	"context"
	"strings"
	"testing"
	"time"
)

// pieceModel streams its pieces one by one, with no network between: what
// an Ask costs beside the model is what is measured.
type pieceModel struct{ pieces []string }

func (m pieceModel) Chat(context.Context, ChatRequest) (string, error) {
	return strings.Join(m.pieces, ""), nil
}

func (m pieceModel) Stream(_ context.Context, _ ChatRequest, onDelta func(string) error) (Usage, error) {
	for _, p := range m.pieces {
		if err := onDelta(p); err != nil {
			return Usage{}, err
		}
	}
	return Usage{CompletionTokens: len(m.pieces)}, nil
}

// BenchmarkAskStreaming is TestCitationsCheckedWhileStreaming's answer
// timed, which the test no longer bounds by the clock: retrieval over the
// quasar vault, then its citations checked while it streams: ns/op the
// whole answer, first-ms the time from Ask to its first delta.
//
//	go test -tags sqlite_fts5 -run '^$' -bench AskStreaming ./rag/
func BenchmarkAskStreaming(b *testing.B) {
	model := pieceModel{pieces: []string{
		"Quasars are bright [[Space/Quasar",
		" light|Quasar light]] and far away [[Space/Quasar redshift]]. ",
		"Black holes power them [[Space/Black holes|Black holes]]; see also ![[Space/Nebula]] ",
		"and [[Diary/Quasar dream 03]]. Jets: [[Quasar jets]]",
	}}
	p := mustPipeline(b, Options{Searcher: quasarVault(b).Search(), Embedder: &bagEmbedder{}, Generator: model})
	var first time.Duration
	for b.Loop() {
		start := time.Now()
		var firstAt time.Time
		deltas := 0
		if _, err := p.Ask(context.Background(), Question{Text: "quasar", AllowWeb: true}, func(string) error {
			if deltas++; deltas == 1 {
				firstAt = time.Now()
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if deltas < len(model.pieces)-1 {
			b.Fatalf("%d deltas for %d pieces: the answer did not stream", deltas, len(model.pieces))
		}
		first += firstAt.Sub(start)
	}
	b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "first-ms")
}
