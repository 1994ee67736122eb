package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/llm/bge"
	"github.com/vaultask/vaultask/llm/uselite"
)

// brokenBGE is a directory of built-in models whose bge has a damaged
// tokenizer (cut to its first kilobyte), and, with withUSELite, the real
// USE-lite beside it.
func brokenBGE(t *testing.T, withUSELite bool) string {
	t.Helper()
	real := llm.DefaultBuiltinDir()
	tok, err := os.ReadFile(filepath.Join(real, bge.Spec.Dir, bge.Spec.Files[1]))
	if err != nil {
		t.Skipf("no bge to damage: %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, bge.Spec.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bge.Spec.Dir, bge.Spec.Files[1]), tok[:1024], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, bge.Spec.Dir, bge.Spec.Files[0]), filepath.Join(dir, bge.Spec.Dir, bge.Spec.Files[0])); err != nil {
		t.Fatal(err)
	}
	if withUSELite {
		if _, err := os.Stat(filepath.Join(real, uselite.Spec.Dir)); err != nil {
			t.Skipf("no USE-lite: %v", err)
		}
		if err := os.Symlink(filepath.Join(real, uselite.Spec.Dir), filepath.Join(dir, uselite.Spec.Dir)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// embedderStatus is what these tests read of /status.
type embedderStatus struct {
	Embedder struct {
		State     string `json:"state"`
		Available bool   `json:"available"`
		LastError string `json:"last_error"`
	} `json:"embedder"`
	Index struct {
		EmbeddingModel  string `json:"embedding_model"`
		EmbeddingStaged *int   `json:"embedding_staged"`
		VectorSearch    bool   `json:"vector_search"`
		Reembedding     *struct {
			Model   string `json:"model"`
			Stalled string `json:"stalled"`
		} `json:"reembedding"`
	} `json:"index"`
}

type readyBody struct {
	Ready    bool     `json:"ready"`
	Embedder string   `json:"embedder"`
	Warnings []string `json:"warnings"`
}

// A model file that cannot be loaded leaves serve answering by full text,
// and says so: /status gives the embedder's state and the loader's error,
// /readyz stays ready with a warning (the index answers; a restart would
// not mend the file), the log says questions too are full text only.
// Before, /readyz said ready with no word of the embedder and /status
// "available": false with no reason.
func TestServeSaysWhyTheEmbedderIsUnavailable(t *testing.T) {
	srv, db, _ := serveVault(t)
	env := withEnv(serveEnv(t, srv, db, citingUpstream(t)), "VAULTASK_MODELS__BUILTIN_DIR", brokenBGE(t, false))
	env = withEnv(env, "VAULTASK_MODELS__EMBEDDING", bge.Spec.ID)
	s := startServe(t, env)
	var ready readyBody
	waitUntil(t, 30*time.Second, "/readyz ready", func() bool {
		return getJSON(t, s.url+"/readyz", &ready) == http.StatusOK
	})
	if !ready.Ready || ready.Embedder != "unavailable" || len(ready.Warnings) != 1 ||
		!strings.Contains(ready.Warnings[0], "embedder unavailable") || !strings.Contains(ready.Warnings[0], "full text only") {
		t.Errorf("/readyz with a broken model: %+v", ready)
	}
	var st embedderStatus
	getJSON(t, s.url+"/status", &st)
	if st.Embedder.State != "unavailable" || st.Embedder.Available || !strings.Contains(st.Embedder.LastError, bge.Spec.Files[1]) ||
		st.Index.VectorSearch || st.Index.EmbeddingStaged == nil {
		t.Errorf("/status with a broken model: %+v", st)
	}
	if log := s.stderr.String(); !strings.Contains(log, "notes and questions are searched by full text only") {
		t.Errorf("the log does not say everything is full text only:\n%s", log)
	}
}

// A model change to a model that cannot load: the old model's vectors
// still answer, and /status, /readyz and the log say so, with the
// re-embedding stalled and why. Before, /status showed the re-embedding at
// 0 with no reason, and the log said "full text only".
func TestServeModelChangeToAModelThatCannotLoad(t *testing.T) {
	srv, db, _ := serveVault(t)
	env := serveEnv(t, srv, db, citingUpstream(t))
	mustIndexVault(t, withEnv(env, "VAULTASK_MODELS__EMBEDDING", uselite.Spec.ID))
	env = withEnv(withEnv(env, "VAULTASK_MODELS__BUILTIN_DIR", brokenBGE(t, true)), "VAULTASK_MODELS__EMBEDDING", bge.Spec.ID)
	s := startServe(t, env)
	var ready readyBody
	if code := getJSON(t, s.url+"/readyz", &ready); code != http.StatusOK || !ready.Ready || ready.Embedder != "unavailable" ||
		len(ready.Warnings) != 1 || !strings.Contains(ready.Warnings[0], "the vectors the index has") {
		t.Errorf("/readyz: %d %+v", code, ready)
	}
	var st embedderStatus
	getJSON(t, s.url+"/status", &st)
	if st.Index.EmbeddingModel != uselite.Spec.ID || !st.Index.VectorSearch || st.Index.Reembedding == nil ||
		st.Index.Reembedding.Stalled != "waiting for the embedder (unavailable)" || !strings.Contains(st.Embedder.LastError, bge.Spec.Files[1]) {
		t.Errorf("/status: %+v (re-embedding %+v)", st, st.Index.Reembedding)
	}
	log := s.stderr.String()
	if !strings.Contains(log, "questions still search the index's vectors of "+uselite.Spec.ID) || strings.Contains(log, "questions are searched by full text only") {
		t.Errorf("the log does not say the old vectors still answer:\n%s", log)
	}
	if code, text := askServed(t, s, "how long do I knead the sourdough?"); code != http.StatusOK || !strings.Contains(text, "Recipes/Sourdough bread") {
		t.Errorf("/v1 with the old vectors: %d %s", code, text)
	}
}
