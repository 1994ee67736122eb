package llm

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// probedFamilies are the model families the golden file probes: every
// family vaultask knew when it was written, built-in and served alike.
// The list is the test's own, so that a row leaving the table still has
// its names probed.
var probedFamilies = []string{
	"multilingual-e5-small-q4", "portuguese-multilingual-e5-small-q4", "multilingual-e5-small", "use-lite",
	"multilingual-e5-large-instruct", "multilingual-e5-base", "multilingual-e5-large", "e5-small", "e5-base",
	"e5-large", "nomic-embed-text-v2", "nomic-embed-text", "mxbai-embed-large", "bge-small-en-v1.5",
	"bge-small-en", "bge-base-en", "bge-large-en", "snowflake-arctic-embed2", "snowflake-arctic-embed-l-v2",
	"snowflake-arctic-embed-m-v2", "snowflake-arctic-embed", "embeddinggemma", "qwen3-embedding", "bge-m3",
	"all-minilm", "paraphrase-multilingual", "granite-embedding", "text-embedding-3-small",
	"text-embedding-3-large", "text-embedding-ada-002", "a-model-never-measured",
}

// TestKnownEmbeddingModelsGolden: what vaultask makes of each model name
// (its prefixes, size, distances, coverage fit and the space it resolves
// to, the files of a built-in model's included) is that of
// testdata/known-embedding-models.golden, for every family written as a
// built-in id (bare and tagged), as Ollama and llama.cpp name it, with a tag and as a
// Hugging Face repository names it. The file was written before the
// built-in models' rows left the table for their packages' specs, so it
// holds the table as it answered then (-update rewrites it).
func TestKnownEmbeddingModelsGolden(t *testing.T) {
	var b strings.Builder
	for _, family := range probedFamilies {
		for _, id := range []string{"builtin/" + family, "builtin/" + family + ":latest", "ollama/" + family + ":latest", "llamacpp/org/" + strings.ToUpper(family) + "-GGUF"} {
			m, known := KnownEmbeddingModel(id)
			fit, own := EmbeddingCoverage(id)
			spec, err := ResolveEmbedding(id, 0, nil)
			fmt.Fprintf(&b, "%s\n\tknown %v: %+v\n\tdistances %+v\n\tcoverage %s (own %v)\n\tspec %+v, %v\n",
				id, known, m, EmbeddingDistances(id), fit.Name, own, spec, err)
		}
	}
	got := b.String()
	path := filepath.Join("testdata", "known-embedding-models.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d differs from %s:\ngot  %s\nwant %s", i+1, path, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, %s has %d", len(gl), path, len(wl))
	}
}
