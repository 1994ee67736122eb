package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeChat is an OpenAI-compatible chat server on loopback that streams a
// scripted answer word by word and records the prompts it was sent.
type fakeChat struct {
	mu      sync.Mutex
	prompts []string
}

func (f *fakeChat) serve(t *testing.T, answer string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Stream {
			http.Error(w, "want a streamed chat request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		for _, m := range req.Messages {
			f.prompts = append(f.prompts, m.Content)
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, word := range strings.SplitAfter(answer, " ") {
			chunk, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": word}}}})
			fmt.Fprintf(w, "data: %s\n\n", chunk)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// The generated answer streams through the CLI; a citation of a note that
// was in the context passes, a made-up one is marked unverified, and with
// allow_web the personal note never reaches the model.
func TestAskGeneratesWithCheckedCitations(t *testing.T) {
	env := askVault(t)
	chat := &fakeChat{}
	url := chat.serve(t, "Open the snapshots of [[en/Plugins/File recovery|File recovery]] to restore it, "+
		"as [[en/Plugins/Time machine|Time machine]] also explains.")
	env = append(env,
		"VAULTASK_MODELS__GENERATION=openai/gpt-test",
		"VAULTASK_MODELS__GENERATION_BASE_URL="+url,
		"VAULTASK_OPENAI_API_KEY=test-key",
	)
	out, stderr, err := run(t, env, "ask", "How do I recover a deleted note?")
	if err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr)
	}
	golden(t, "ask/stdout", out, nil)
	golden(t, "ask/stderr", stderr, nil)
	if !strings.Contains(out, "[[en/Plugins/File recovery|File recovery]]") {
		t.Errorf("the verified citation is missing:\n%s", out)
	}
	if strings.Contains(out, "[[en/Plugins/Time machine") || !strings.Contains(out, "Time machine (unverified citation)") {
		t.Errorf("the made-up citation is not marked:\n%s", out)
	}
	personal := func() bool {
		chat.mu.Lock()
		defer chat.mu.Unlock()
		if len(chat.prompts) == 0 {
			t.Fatal("the model was never asked")
		}
		for _, p := range chat.prompts {
			if strings.Contains(p, "secret-diary-text") {
				return true
			}
		}
		return false
	}
	if personal() {
		t.Fatal("a personal note reached the model of an allow_web request")
	}
	// The same question for the vault only does see it: the check above
	// looks where a leak would show.
	chat.mu.Lock()
	chat.prompts = nil
	chat.mu.Unlock()
	if _, stderr, err := run(t, env, "ask", "--allow-web=false", "How do I recover a deleted note?"); err != nil {
		t.Fatalf("ask --allow-web=false: %v\n%s", err, stderr)
	}
	if !personal() {
		t.Fatal("the vault-only request did not give the model the personal note")
	}
}
