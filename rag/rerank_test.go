package rag

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/tstest/fakellm"
)

// crossEncoder is a real llm.Client for a rerank model served by fake, a
// loopback server speaking llama-server's /v1/rerank.
func crossEncoder(tb testing.TB, fake *fakellm.Server, o RerankOptions) *Reranker {
	tb.Helper()
	c, err := llm.NewClient("llamacpp/bge-reranker-v2-m3", llm.Options{BaseURL: fake.URL()})
	if err != nil {
		tb.Fatal(err)
	}
	return NewCrossEncoderReranker(c, o)
}

// bodyHits are n direct hits, n01.md to nNN.md, each with the body given
// for its row or "nothing to see" (no word of the queries below).
func bodyHits(n int, bodies map[int64]string) []Hit {
	hits := make([]Hit, n)
	for i := range hits {
		row := int64(i + 1)
		hits[i] = direct(row, fmt.Sprintf("n%02d.md", row), float64(n-i))
		hits[i].Chunk.Body = "nothing to see"
		if b, ok := bodies[row]; ok {
			hits[i].Chunk.Body = b
		}
	}
	return hits
}

// rowIDs are hits' chunk rows in order; nil for no hits.
func rowIDs(hits []Hit) []int64 {
	var out []int64
	for _, h := range hits {
		out = append(out, h.Chunk.RowID)
	}
	return out
}

// A cross-encoder's scores reorder the candidates: 23 passages in batches
// of 5 are 5 requests, each passage sent once, and the passages the fake
// scores by word overlap come first, best first, the rest in fused order.
func TestCrossEncoderRerankReordersInBatches(t *testing.T) {
	t.Parallel()
	fake := fakellm.New()
	defer fake.Close()
	hits := bodyHits(23, map[int64]string{17: "The kestrel hovers over meadows.", 9: "A kestrel.", 23: "Meadows, where it hovers."})
	got, rep, err := rerankTop(context.Background(), crossEncoder(t, fake, RerankOptions{Batch: 5}), "kestrel hovers over meadows", hits, 23)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{17, 23, 9, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22}
	if diff := cmp.Diff(want, rowIDs(got)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	reqs := fake.RerankRequests()
	sent := map[string]int{}
	for _, r := range reqs {
		if len(r.Documents) > 5 || r.Model != "bge-reranker-v2-m3" || r.Query != "kestrel hovers over meadows" || r.TopN != len(r.Documents) {
			t.Errorf("request: %+v", r)
		}
		for _, d := range r.Documents {
			sent[d]++
		}
	}
	if len(reqs) != 5 || len(sent) != 23 {
		t.Errorf("%d requests carrying %d distinct passages; want 5 carrying 23", len(reqs), len(sent))
	}
	if sent["n01.md\nnothing to see"] != 1 || sent["n17.md\nThe kestrel hovers over meadows."] != 1 {
		t.Errorf("a document is its path, then its text: %v", sent)
	}
	if rep.Kind != "cross-encoder" || rep.Requests != 5 || rep.Passages != 23 || rep.Bytes == 0 || rep.Skipped != "" {
		t.Errorf("report: %+v", rep)
	}
	if !got[0].Reranked || got[0].Rerank != 1 {
		t.Errorf("top hit's rerank score: %+v", got[0])
	}
}

// A rerank model that is down, too slow for its budget, or answers garbage
// leaves the fused order, and the report says why.
func TestCrossEncoderFallsBackToFusedOrder(t *testing.T) {
	t.Parallel()
	down := fakellm.New()
	down.Close()
	for _, tc := range []struct {
		name  string
		setup func(*fakellm.Server)
		fake  *fakellm.Server
		why   string
	}{
		{name: "down", fake: down, why: "connection refused"},
		// The fake would answer in an hour; the test returning at all is
		// the budget working.
		{name: "slow", setup: func(f *fakellm.Server) { f.RerankDelay = time.Hour }, why: "budget"},
		{name: "garbage", setup: func(f *fakellm.Server) { f.RerankRaw = "<html>busy</html>" }, why: "not a rerank result"},
		{name: "short", setup: func(f *fakellm.Server) { f.RerankRaw = `{"results":[{"index":0,"relevance_score":1}]}` }, why: "1 results for"},
		{name: "repeated", setup: func(f *fakellm.Server) {
			f.RerankRaw = `{"results":[{"index":0,"relevance_score":1},{"index":0,"relevance_score":2},{"index":1,"relevance_score":3}]}`
		}, why: "out of range or repeated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := tc.fake
			if fake == nil {
				fake = fakellm.New()
				defer fake.Close()
				tc.setup(fake)
			}
			// Two full batches, so that each fails the same way.
			hits := bodyHits(6, map[int64]string{6: "kestrel"})
			got, rep, err := rerankTop(context.Background(), crossEncoder(t, fake, RerankOptions{Batch: 3, Budget: 200 * time.Millisecond}), "kestrel", hits, 6)
			if err == nil || !strings.Contains(err.Error(), tc.why) || rep.Skipped != err.Error() {
				t.Fatalf("err = %v, report %+v; want %q", err, rep, tc.why)
			}
			if diff := cmp.Diff(rowIDs(hits), rowIDs(got)); diff != "" {
				t.Errorf("order changed (-fused +got):\n%s", diff)
			}
			for _, h := range got {
				if h.Reranked {
					t.Errorf("%s marked reranked", h.Chunk.Path)
				}
			}
		})
	}
}

// A request that allows the web never sends a personal passage to the
// rerank model: they are never candidates. The same question over all
// notes does send them, so the check can fail.
func TestRerankSendsNoPersonalPassageForWeb(t *testing.T) {
	t.Parallel()
	store := quasarVault(t)
	for _, allowWeb := range []bool{true, false} {
		fake := fakellm.New()
		p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Reranker: crossEncoder(t, fake, RerankOptions{Batch: 4})})
		r := mustRetrieve(t, p, Question{Text: "quasar", AllowWeb: allowWeb})
		fake.Close()
		personal, docs := 0, 0
		for _, req := range fake.RerankRequests() {
			for _, d := range req.Documents {
				docs++
				if strings.Contains(d, personalMark) {
					personal++
				}
			}
		}
		if r.Rerank == nil || r.Rerank.Skipped != "" || r.Rerank.Passages != docs || docs == 0 {
			t.Fatalf("allow_web %v: report %+v, %d documents sent", allowWeb, r.Rerank, docs)
		}
		if allowWeb && personal > 0 {
			t.Errorf("allow_web: %d personal passages sent to the rerank model", personal)
		}
		if !allowWeb && personal == 0 {
			t.Errorf("all notes: no personal passage reached the rerank model, so the allow_web check proves nothing")
		}
	}
}

// A model that stays down is logged once, not at every question; each
// question's trace and result still say the rerank was skipped and why.
func TestRerankFailureLoggedOnce(t *testing.T) {
	t.Parallel()
	store := quasarVault(t)
	down := fakellm.New()
	down.Close()
	var log bytes.Buffer
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Reranker: crossEncoder(t, down, RerankOptions{}),
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	for range 3 {
		r := mustRetrieve(t, p, Question{Text: "quasar", AllowWeb: true})
		res := NewResult(r, nil, true)
		if res.Rerank == nil || !strings.Contains(res.Rerank.Skipped, "connection refused") {
			t.Fatalf("result's rerank: %+v", res.Rerank)
		}
		if note := rerankNote(r); !strings.Contains(note, "skipped") || !strings.Contains(note, "fused order kept") {
			t.Errorf("trace note = %q", note)
		}
	}
	if n := strings.Count(log.String(), "rerank failed"); n != 1 {
		t.Errorf("%d log lines about the failing rerank model, want 1:\n%s", n, log.String())
	}
}

func rerankNote(r *Retrieval) string {
	for _, s := range r.Trace.Stages {
		if s.Name == "rerank" {
			return s.Note
		}
	}
	return ""
}

func FuzzParseRerank(f *testing.F) {
	for _, s := range []string{"[7, 0, 3.5]", "```json\n[1,2]\n```", "[-1]", "[1e999]", `{"scores": [1]}`, "```\n[1]"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, reply string, n int) {
		scores, err := parseRerank(reply, n)
		if err != nil {
			return
		}
		if len(scores) != n {
			t.Fatalf("%d scores for %d passages", len(scores), n)
		}
		for _, x := range scores {
			if !(x >= 0 && x <= 10) {
				t.Fatalf("score %v outside 0 to 10", x)
			}
		}
	})
}
