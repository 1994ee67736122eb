package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/llm/builtin"
)

// fakeOllama speaks Ollama's OpenAI-compatible /v1/embeddings with
// deterministic 4-d vectors, and counts the texts it embedded; last is the
// last text it was sent.
func fakeOllama(t *testing.T) (string, *atomic.Int64) {
	url, texts, _ := fakeOllamaLast(t)
	return url, texts
}

func fakeOllamaLast(t *testing.T) (string, *atomic.Int64, *atomic.Value) {
	var texts atomic.Int64
	var last atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		texts.Add(int64(len(req.Input)))
		if len(req.Input) > 0 {
			last.Store(req.Input[len(req.Input)-1])
		}
		data := make([]map[string]any, len(req.Input))
		for i, in := range req.Input {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": []float64{float64(len(in)), 1, 0, float64(i)}}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data, "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", &texts, &last
}

// TestIndexReembedsOnAModelChange: an index built with one model and
// indexed again with another is re-embedded with it, its passages given the
// new model's document prefix; while the new model cannot be reached the
// index keeps its old vectors, searchable, and says how far it is.
func TestIndexReembedsOnAModelChange(t *testing.T) {
	url, texts, last := fakeOllamaLast(t)
	vault := writeVault(t, map[string]string{"a.md": "alpha\n", "b.md": "beta\n", "c.md": "gamma\n"})
	dbPath := filepath.Join(t.TempDir(), "i.db")
	paths := map[string]string{vault: "$VAULT", dbPath: "$INDEX"}
	base := []string{
		"VAULTASK_INDEX__PATH=" + dbPath,
		"VAULTASK_MODELS__EMBEDDING_DIM=4",
		"VAULTASK_OVERRIDES_FILE=/nonexistent/overrides.json",
	}
	env := append(base, "VAULTASK_MODELS__EMBEDDING=ollama/bge-m3", "VAULTASK_MODELS__EMBEDDING_BASE_URL="+url)
	out, stderr, err := run(t, env, "index", "--from-dir", vault)
	if err != nil || texts.Load() != 3 {
		t.Fatalf("index with ollama: %v (%d texts)\n%s\n%s", err, texts.Load(), out, stderr)
	}
	golden(t, "index/stdout", out, paths)

	// The new model's server is down: the index keeps its old space.
	down := append(base, "VAULTASK_MODELS__EMBEDDING=ollama/nomic-embed-text", "VAULTASK_MODELS__EMBEDDING_BASE_URL=http://127.0.0.1:1/v1")
	if _, stderr, err := run(t, down, "index", "--from-dir", vault); err != nil {
		t.Fatalf("index with the new model unreachable: %v\n%s", err, stderr)
	}
	out, _, err = run(t, down, "stats", "--json")
	if err != nil {
		t.Fatalf("stats while re-embedding: %v", err)
	}
	golden(t, "stats-reembedding/stdout", out, paths)

	other := append(base, "VAULTASK_MODELS__EMBEDDING=ollama/nomic-embed-text", "VAULTASK_MODELS__EMBEDDING_BASE_URL="+url)
	out, _, err = run(t, other, "index", "--from-dir", vault)
	if err != nil || texts.Load() != 6 {
		t.Fatalf("re-embedding with the new model: %v (%d texts)\n%s", err, texts.Load(), out)
	}
	if got, _ := last.Load().(string); !strings.HasPrefix(got, "search_document: ") {
		t.Errorf("a passage went to nomic-embed-text as %q, without its document prefix", got)
	}
	golden(t, "reembed/stdout", out, paths)
	out, _, err = run(t, other, "stats", "--json")
	if err != nil {
		t.Fatalf("stats after re-embedding: %v", err)
	}
	golden(t, "stats-json/stdout", out, paths)
}

// mustDefaultEmbedder is m's embedder for the default configuration, the
// built-in bge. Without its files it skips, naming the command that fetches
// them, unless VAULTASK_REQUIRE_MODELS=1 (scripts/test.sh sets it), where
// it fails, as does any other error.
func mustDefaultEmbedder(tb testing.TB, m *Main) *llm.Embedding {
	tb.Helper()
	e, err := m.embedder(config.Default())
	if errors.Is(err, builtin.ErrModelNotFound) && os.Getenv(config.EnvRequireModels) != "1" {
		tb.Skipf("%v; vaultask fetch-model bge fetches it", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// One command loads its embedder once: serve's pipeline and its vectorizer
// share the built-in model instead of holding two copies of its weights.
func TestEmbedderLoadedOncePerCommand(t *testing.T) {
	m := NewMain(io.Discard, io.Discard, nil)
	cfg := config.Default()
	a := mustDefaultEmbedder(t, m)
	b, err := m.embedder(cfg)
	if err != nil || a != b {
		t.Fatalf("second embedder %v (%v), want the first one again", b, err)
	}
}
