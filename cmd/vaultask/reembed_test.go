package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/syncbuf"
)

// gatedEmbedder is an OpenAI-compatible embedding server (Ollama's /v1)
// whose answers wait at a gate: the first allowed requests are answered at
// once, later ones once open is closed. It counts the texts it embedded
// and the passages it was sent without the document prefix it expects.
type gatedEmbedder struct {
	url      string
	allowed  atomic.Int64 // requests answered before the gate
	requests atomic.Int64
	texts    atomic.Int64
	bare     atomic.Int64
	open     chan struct{}
	prefix   string
}

func newGatedEmbedder(t *testing.T, prefix string, allowed int64) *gatedEmbedder {
	t.Helper()
	g := &gatedEmbedder{open: make(chan struct{}), prefix: prefix}
	g.allowed.Store(allowed)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if g.requests.Add(1) > g.allowed.Load() {
			select {
			case <-g.open:
			case <-r.Context().Done():
				return
			}
		}
		data := make([]map[string]any, len(req.Input))
		for i, in := range req.Input {
			if !strings.HasPrefix(in, g.prefix) {
				g.bare.Add(1)
			}
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": []float64{1, float64(len(in) % 7), 0.5, 0}}
		}
		g.texts.Add(int64(len(req.Input)))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "m", "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(func() {
		g.release()
		srv.Close()
	})
	g.url = srv.URL + "/v1"
	return g
}

func (g *gatedEmbedder) release() {
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// serveStatus is what the re-embedding tests read of /status.
type serveStatus struct {
	Index struct {
		Chunks         int    `json:"chunks"`
		Vectors        int    `json:"vectors"`
		EmbeddingModel string `json:"embedding_model"`
		Reembedding    *struct {
			Model        string `json:"model"`
			Embedded     int    `json:"embedded"`
			Total        int    `json:"total"`
			VectorSearch bool   `json:"vector_search"`
		} `json:"reembedding"`
	} `json:"index"`
}

// TestServeReembedsInTheBackground: serve started on an index of another
// embedding model than the configured one starts at once, answers from the
// start (by full text: the old model is not a built-in one it could embed
// questions with, as /status says), shows the re-embedding's progress on
// /readyz and /status, and switches to the new vectors once every chunk
// has one.
func TestServeReembedsInTheBackground(t *testing.T) {
	srv, db, _ := serveVault(t)
	up := citingUpstream(t)
	old, _ := fakeOllama(t)
	env := withEnv(withEnv(serveEnv(t, srv, db, up), "VAULTASK_MODELS__EMBEDDING", "ollama/bge-m3"), "VAULTASK_MODELS__EMBEDDING_DIM", "4")
	mustIndexVault(t, withEnv(env, "VAULTASK_MODELS__EMBEDDING_BASE_URL", old))

	next := newGatedEmbedder(t, "search_document: ", 0)
	env = withEnv(withEnv(env, "VAULTASK_MODELS__EMBEDDING", "ollama/nomic-embed-text"), "VAULTASK_MODELS__EMBEDDING_BASE_URL", next.url)
	s := startServe(t, env)

	var rz struct {
		Ready       bool `json:"ready"`
		Reembedding *struct {
			Model           string `json:"model"`
			Embedded, Total int
		} `json:"reembedding"`
	}
	if code := getJSON(t, s.url+"/readyz", &rz); code != http.StatusOK || !rz.Ready || rz.Reembedding == nil ||
		!strings.Contains(rz.Reembedding.Model, "nomic-embed-text") || rz.Reembedding.Embedded != 0 {
		t.Fatalf("/readyz while re-embedding: %d %+v %+v", code, rz, rz.Reembedding)
	}
	var st serveStatus
	getJSON(t, s.url+"/status", &st)
	if st.Index.EmbeddingModel != "ollama/bge-m3" || st.Index.Reembedding == nil || st.Index.Reembedding.Total != st.Index.Chunks || st.Index.Reembedding.VectorSearch {
		t.Fatalf("/status while re-embedding: %+v", st.Index)
	}
	if code, text := askServed(t, s, "how long do I knead the sourdough?"); code != http.StatusOK || !strings.Contains(text, "Recipes/Sourdough bread") {
		t.Fatalf("/v1 while re-embedding: %d %s", code, text)
	}

	next.release()
	waitUntil(t, 30*time.Second, "the switch to the new vectors", func() bool {
		var st serveStatus
		getJSON(t, s.url+"/status", &st)
		return st.Index.Reembedding == nil && st.Index.EmbeddingModel == "ollama/nomic-embed-text" && st.Index.Vectors == st.Index.Chunks
	})
	if n := next.bare.Load(); n != 0 {
		t.Errorf("%d passages reached nomic-embed-text without its document prefix", n)
	}
	if code, text := askServed(t, s, "how long do I knead the sourdough?"); code != http.StatusOK || !strings.Contains(text, "Recipes/Sourdough bread") {
		t.Fatalf("/v1 after the switch: %d %s", code, text)
	}
}

// TestReembeddingResumesAfterKill: serve killed (SIGKILL) while it
// re-embeds resumes where it was: the batches committed before the kill
// are not embedded again, and the index switches once the rest is done.
func TestReembeddingResumesAfterKill(t *testing.T) {
	bin := vaultaskBinary(t)
	notes := map[string]string{}
	for i := range 150 {
		notes[fmt.Sprintf("n%03d.md", i)] = fmt.Sprintf("# Note %d\n\nNote number %d of a vault re-embedded with a new model.\n", i, i)
	}
	dir := writeVault(t, notes)
	old, _ := fakeOllama(t)
	data := t.TempDir()
	base := []string{
		"VAULTASK_INDEX__PATH=" + filepath.Join(data, "vaultask.db"),
		"VAULTASK_OVERRIDES_FILE=" + filepath.Join(data, "none.json"),
		"VAULTASK_VAULT__SOURCE=folder", "VAULTASK_VAULT__PATH=" + dir,
		"VAULTASK_MODELS__EMBEDDING_DIM=4", "VAULTASK_API__LISTEN=127.0.0.1:0",
	}
	if _, stderr, err := run(t, append(base, "VAULTASK_MODELS__EMBEDDING=ollama/bge-m3", "VAULTASK_MODELS__EMBEDDING_BASE_URL="+old), "index"); err != nil {
		t.Fatalf("index: %v\n%s", err, stderr)
	}

	// The new model answers two batches (64 chunks each), then hangs.
	next := newGatedEmbedder(t, "search_document: ", 2)
	env := append(base, "VAULTASK_MODELS__EMBEDDING=ollama/nomic-embed-text", "VAULTASK_MODELS__EMBEDDING_BASE_URL="+next.url)
	url, cmd := startServeProcess(t, bin, env)
	waitUntil(t, 30*time.Second, "two batches embedded", func() bool {
		var st serveStatus
		getJSON(t, url+"/status", &st)
		return st.Index.Reembedding != nil && st.Index.Reembedding.Embedded == 128
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got := next.texts.Load(); got != 128 {
		t.Fatalf("%d texts embedded before the kill, want 128", got)
	}

	next.release()
	url, _ = startServeProcess(t, bin, env)
	waitUntil(t, 30*time.Second, "the switch after the restart", func() bool {
		var st serveStatus
		getJSON(t, url+"/status", &st)
		return st.Index.Reembedding == nil && st.Index.EmbeddingModel == "ollama/nomic-embed-text" && st.Index.Vectors == 150
	})
	if got := next.texts.Load(); got != 150 {
		t.Errorf("%d texts embedded in all, want 150: the restart embedded again what was committed", got)
	}
}

// startServeProcess runs the vaultask binary (vaultaskBinary) as serve with
// env and returns its URL once it listens; the process is killed when the
// test ends.
func startServeProcess(t *testing.T, bin string, env []string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append([]string{asMainEnv + "=1", "HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, env...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingOn.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case url := <-found:
		return url, cmd
	case <-ctx.Done():
		t.Fatalf("serve did not listen within 30s\n%s", stderr.String())
		return "", nil
	}
}

// TestServeEmbedsNewNotesInTheSearchedSpace: a note written while serve
// re-embeds the index, from the built-in USE-lite to another model, gets
// its vector in the space searches use until the switch (USE-lite's, a
// built-in model at hand, as /status says), not only in the new one, which
// reaches it last: here never, its host down.
func TestServeEmbedsNewNotesInTheSearchedSpace(t *testing.T) {
	srv, db, lp := serveVault(t)
	env := withEnv(serveEnv(t, srv, db, citingUpstream(t)), "VAULTASK_MODELS__EMBEDDING", "builtin/use-lite")
	mustIndexVault(t, env)

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	env = withEnv(withEnv(withEnv(env, "VAULTASK_MODELS__EMBEDDING", "ollama/nomic-embed-text"), "VAULTASK_MODELS__EMBEDDING_BASE_URL", down.URL+"/v1"),
		"VAULTASK_MODELS__EMBEDDING_DIM", "4")
	s := startServe(t, env)
	var before serveStatus
	getJSON(t, s.url+"/status", &before)
	if before.Index.Reembedding == nil || !before.Index.Reembedding.VectorSearch || before.Index.EmbeddingModel != "builtin/use-lite" || before.Index.Vectors != before.Index.Chunks {
		t.Fatalf("/status as serve starts re-embedding: %+v", before.Index)
	}
	putNote(t, lp)("Recipes/Focaccia.md", "# Focaccia\n\nDimple the dough with oiled fingers and bake it at 230 degrees.\n")
	waitUntil(t, 60*time.Second, "the new note's vector in USE-lite's space", func() bool {
		var st serveStatus
		getJSON(t, s.url+"/status", &st)
		return st.Index.Chunks == before.Index.Chunks+1 && st.Index.Vectors == st.Index.Chunks
	})
	var st serveStatus
	getJSON(t, s.url+"/status", &st)
	if st.Index.Reembedding == nil || st.Index.Reembedding.Embedded != 0 || st.Index.EmbeddingModel != "builtin/use-lite" {
		t.Fatalf("/status: %+v; want still re-embedding, nothing in the new space yet", st.Index)
	}
}
