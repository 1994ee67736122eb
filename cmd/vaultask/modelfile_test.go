package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/llm/bge"
	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/llm/e5"
	"github.com/vaultask/vaultask/tstest/inplace"
)

// searchProvenance calls vault_search for query in an MCP session of url
// and returns the searches that found its hits (vector, fts, graph).
func searchProvenance(t *testing.T, hc *http.Client, url, session, query string) []string {
	t.Helper()
	body, _, err := mcpPost(hc, url, session, 2, "tools/call", map[string]any{"name": "vault_search", "arguments": map[string]any{"query": query}})
	if err != nil {
		t.Fatalf("vault_search: %v", err)
	}
	var res struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Hits []struct {
					Provenance []string `json:"provenance"`
				} `json:"hits"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil || res.Result.IsError || len(res.Result.StructuredContent.Hits) == 0 {
		t.Fatalf("vault_search %q: %v %s", query, err, body)
	}
	var found []string
	for _, h := range res.Result.StructuredContent.Hits {
		for _, p := range h.Provenance {
			if !slices.Contains(found, p) {
				found = append(found, p)
			}
		}
	}
	return found
}

// TestModelFileRewrittenUnderServe: the built-in model's mapped file (bge's
// ONNX, e5's 4-bit file) cut short under a running serve, then copied over
// in place as cp does (and as the shell fetch-model.sh did). The model read its word
// table from the mapping, so the next question killed serve (SIGBUS); now
// questions are answered by full text while the file is wrong, and by
// vectors again once it is the pinned file.
func TestModelFileRewrittenUnderServe(t *testing.T) {
	bin := vaultaskBinary(t)
	// Their first files are the ones mapped while the model loads.
	models := []*builtin.Spec{&bge.Spec, &e5.Spec}
	vault := writeVault(t, map[string]string{
		"Recipes/Sourdough bread.md": "# Sourdough bread\n\nKnead the dough for ten minutes, then let it rise overnight in the fridge.\n",
		"Garden/Tomatoes.md":         "# Tomatoes\n\nTomatoes want full sun, water at the roots and a stake to climb.\n",
		"Travel/Lisbon.md":           "# Lisbon\n\nTram 28 climbs through Alfama; take it early before the crowds.\n",
	})
	for _, m := range models {
		t.Run(m.Dir, func(t *testing.T) {
			src := filepath.Join(llm.DefaultBuiltinDir(), m.Dir)
			if d := os.Getenv("VAULTASK_MODELS__BUILTIN_DIR"); d != "" {
				src = filepath.Join(d, m.Dir)
			}
			if _, err := os.Stat(filepath.Join(src, m.Files[0])); errors.Is(err, os.ErrNotExist) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1" {
				t.Skipf("no %s here: vaultask fetch-model fetches it", src)
			}
			builtinDir := t.TempDir()
			if err := os.Mkdir(filepath.Join(builtinDir, m.Dir), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range m.Files {
				inplace.Copy(t, filepath.Join(src, f), filepath.Join(builtinDir, m.Dir, f))
			}
			data := t.TempDir()
			url, _ := startServeProcess(t, bin, []string{
				"VAULTASK_INDEX__PATH=" + filepath.Join(data, "vaultask.db"),
				"VAULTASK_OVERRIDES_FILE=" + filepath.Join(data, "none.json"),
				"VAULTASK_VAULT__SOURCE=folder", "VAULTASK_VAULT__PATH=" + vault,
				"VAULTASK_MODELS__EMBEDDING=" + m.ID, "VAULTASK_MODELS__BUILTIN_DIR=" + builtinDir,
				"VAULTASK_API__LISTEN=127.0.0.1:0",
			})
			waitUntil(t, 60*time.Second, "every chunk embedded", func() bool {
				var st serveStatus
				getJSON(t, url+"/status", &st)
				return st.Index.Chunks > 0 && st.Index.Vectors == st.Index.Chunks
			})
			hc := &http.Client{Timeout: time.Minute}
			session := mcpSession(t, hc, url)
			const question = "how long do I knead the dough?"
			if found := searchProvenance(t, hc, url, session, question); !slices.Contains(found, "vector") {
				t.Fatalf("before the file changed, the hits came from %v, not vector search", found)
			}

			path := filepath.Join(builtinDir, m.Dir, m.Files[0])
			if err := os.Truncate(path, 1<<20); err != nil {
				t.Fatal(err)
			}
			// A serve killed by the change fails the call (searchProvenance).
			if found := searchProvenance(t, hc, url, session, question); slices.Contains(found, "vector") {
				t.Errorf("with the model file cut short, the hits came from %v: vectors of a file that is not the pinned one", found)
			}
			inplace.Copy(t, filepath.Join(src, m.Files[0]), path)
			if found := searchProvenance(t, hc, url, session, question); !slices.Contains(found, "vector") {
				t.Errorf("once the file is copied back, the hits came from %v, not vector search", found)
			}
		})
	}
}
