package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/tstest/fakellm"
)

// Rerank speaks llama-server's /v1/rerank: the fake sends its results best
// first, and the scores come back in document order.
func TestRerankOverRerankEndpoint(t *testing.T) {
	fake := fakellm.New()
	defer fake.Close()
	c, err := NewClient("llamacpp/bge-reranker-v2-m3", Options{BaseURL: fake.URL()})
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{"a heron wades", "the kestrel hovers", "kestrel"}
	got, err := c.Rerank(context.Background(), "kestrel hovers", docs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{0, 1, 0.5}, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	reqs := fake.RerankRequests()
	if len(reqs) != 1 || reqs[0].Model != "bge-reranker-v2-m3" || !cmp.Equal(reqs[0].Documents, docs) || reqs[0].TopN != 3 {
		t.Errorf("requests: %+v", reqs)
	}
}

// The llamacpp provider is local: no key, llama-server on port 8081.
func TestLlamaCppProviderIsLocal(t *testing.T) {
	c, err := NewClient("llamacpp/bge-reranker-v2-m3", Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if c.baseURL != "http://127.0.0.1:8081/v1" {
		t.Errorf("base URL %s", c.baseURL)
	}
	if err := CheckLocalEmbedding("llamacpp/bge-m3", ""); err != nil {
		t.Errorf("llamacpp embedding refused: %v", err)
	}
}

func TestParseRerankReply(t *testing.T) {
	for _, tc := range []struct {
		reply string
		n     int
		want  []float64
		err   string
	}{
		{`{"results":[{"index":1,"relevance_score":-2.5},{"index":0,"relevance_score":3}]}`, 2, []float64{3, -2.5}, ""},
		{`{"model":"m","results":[{"index":0,"relevance_score":0.1,"document":{"text":"x"}}],"usage":{"total_tokens":3}}`, 1, []float64{0.1}, ""},
		{`{"results":[{"index":0,"relevance_score":1}]}`, 2, nil, "1 results for 2 documents"},
		{`{"results":[{"index":0,"relevance_score":1},{"index":0,"relevance_score":1}]}`, 2, nil, "out of range or repeated"},
		{`{"results":[{"index":2,"relevance_score":1},{"index":0,"relevance_score":1}]}`, 2, nil, "out of range or repeated"},
		{`{"results":[{"index":0,"score":1}]}`, 1, nil, "lacks its index or relevance_score"},
		{`{"results":[{"relevance_score":1}]}`, 1, nil, "lacks its index or relevance_score"},
		{`{"results":[{"index":0,"relevance_score":"high"}]}`, 1, nil, "not a rerank result"},
		{`[0.5]`, 1, nil, "not a rerank result"},
		{`<html>502</html>`, 1, nil, "not a rerank result"},
	} {
		got, err := ParseRerankReply([]byte(tc.reply), tc.n)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRerankReply(%s) error = %v, want %q", tc.reply, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("ParseRerankReply(%s) = %v, %v; want %v", tc.reply, got, err, tc.want)
		}
	}
}

func FuzzParseRerankReply(f *testing.F) {
	for _, s := range []string{
		`{"results":[{"index":1,"relevance_score":-2.5},{"index":0,"relevance_score":3}]}`,
		`{"results":[{"index":0,"relevance_score":1},{"index":0,"relevance_score":1}]}`,
		`{"results":[{"index":-1,"relevance_score":1e308}]}`,
		`{"results":null}`,
		`[]`,
	} {
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, reply []byte, n int) {
		if n > 1<<16 {
			return
		}
		scores, err := ParseRerankReply(reply, n)
		if err == nil && len(scores) != n {
			t.Fatalf("%d scores for %d documents", len(scores), n)
		}
	})
}
