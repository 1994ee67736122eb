package config

import "time"

// Config is vaultask's effective configuration. The yaml tags are the key
// names in every layer: config.yaml, the overrides file (the same shape as
// JSON) and VAULTASK_<SECTION>__<KEY> environment variables.
type Config struct {
	Vault       Vault       `yaml:"vault"`
	Corpus      Corpus      `yaml:"corpus"`
	Sensitivity Sensitivity `yaml:"sensitivity"`
	Index       Index       `yaml:"index"`
	Models      Models      `yaml:"models"`
	Retrieval   Retrieval   `yaml:"retrieval"`
	Web         Web         `yaml:"web"`
	API         API         `yaml:"api"`
	MCP         MCP         `yaml:"mcp"`
	Log         Log         `yaml:"log"`
}

// Vault says where the notes come from: a CouchDB database synced by
// Obsidian LiveSync, or a plain folder of Markdown files.
type Vault struct {
	Source   string `yaml:"source" validate:"oneof=couchdb folder"`
	URL      string `yaml:"url" validate:"omitempty,http_url"`
	Database string `yaml:"database"`
	User     string `yaml:"user"`
	// Auth is how vaultask logs in to CouchDB: HTTP basic auth on every
	// request, or a /_session cookie.
	Auth     string `yaml:"auth" validate:"oneof=basic cookie"`
	Password Secret `yaml:"password"`
	// Passphrase decrypts LiveSync's end-to-end encrypted documents.
	Passphrase Secret `yaml:"passphrase"`
	// Path is the vault folder when Source is "folder".
	Path string `yaml:"path"`
}

// Corpus picks the notes to index, as doublestar globs over vault-relative
// paths; Exclude wins over Include.
type Corpus struct {
	Include []string `yaml:"include" validate:"min=1,dive,required,glob"`
	Exclude []string `yaml:"exclude" validate:"dive,required,glob"`
}

// Sensitivity marks notes as personal: by path, or by a frontmatter key.
type Sensitivity struct {
	PersonalPaths  []string `yaml:"personal_paths" validate:"dive,required,glob"`
	FrontmatterKey string   `yaml:"frontmatter_key" validate:"required"`
}

// Index is the SQLite file and how often it is reconciled against the whole
// vault, to catch changes the follower missed (at least MinReconcileInterval).
type Index struct {
	Path              string        `yaml:"path" validate:"required"`
	ReconcileInterval time.Duration `yaml:"reconcile_interval"`
}

// Models are model ids of the form provider/name (see the providers list in
// validate.go); an empty Rerank disables reranking.
type Models struct {
	Generation string `yaml:"generation" validate:"required,model_id"`
	// GenerationBaseURL replaces the generation provider's API root, e.g.
	// an OpenAI-compatible server on the operator's LAN.
	GenerationBaseURL string `yaml:"generation_base_url" validate:"omitempty,http_url"`
	// GenerationTimeout bounds one request to the generation model, its
	// whole streamed answer included: a local model on a small machine
	// reads a long context slowly.
	GenerationTimeout time.Duration `yaml:"generation_timeout"`
	// GenerationVerdict asks the generation model to judge first whether
	// the passages answer the question (answered, partly, not in the
	// vault), which then decides the web search and the silent answer;
	// false leaves that to the coverage judgement alone, for a model too
	// small to judge (one that says "partly" of everything searches the web
	// for every question).
	GenerationVerdict bool   `yaml:"generation_verdict"`
	Rerank            string `yaml:"rerank" validate:"omitempty,model_id"`
	// RerankKind is how the rerank model scores passages: chat, a prompt
	// per batch that any chat model answers (Ollama has no rerank
	// endpoint), or cross-encoder, POST /v1/rerank (llama.cpp's
	// llama-server --reranking, or any Jina/Cohere-shaped server).
	RerankKind string `yaml:"rerank_kind" validate:"oneof=chat cross-encoder"`
	// RerankBaseURL replaces the rerank provider's API root.
	RerankBaseURL string `yaml:"rerank_base_url" validate:"omitempty,http_url"`
	// RerankBudget bounds a question's whole rerank; past it the fused
	// order is kept.
	RerankBudget time.Duration `yaml:"rerank_budget"`
	// RerankBatch is how many passages one rerank request carries.
	RerankBatch int    `yaml:"rerank_batch" validate:"min=1,max=100"`
	Embedding   string `yaml:"embedding" validate:"required,model_id"`
	// EmbeddingBaseURL is the operator's own OpenAI-compatible embedding
	// server; only then may Embedding name a hosted provider's model.
	EmbeddingBaseURL string `yaml:"embedding_base_url" validate:"omitempty,http_url"`
	// EmbeddingDim is the length of the embedding model's vectors; 0 is the
	// model's own, which vaultask knows for the built-in models and the
	// common ones.
	EmbeddingDim int `yaml:"embedding_dim" validate:"min=0"`
	// EmbeddingQueryPrefix and EmbeddingDocumentPrefix are put before a
	// question and a passage before they are embedded; "auto" takes the
	// model's own (KnownEmbeddingModel in llm: "query: " and "passage: "
	// for E5 models), "" puts none.
	EmbeddingQueryPrefix    string `yaml:"embedding_query_prefix" validate:"max=500"`
	EmbeddingDocumentPrefix string `yaml:"embedding_document_prefix" validate:"max=500"`
	// BuiltinDir holds the built-in embedding models, each in a folder of
	// its own, where `vaultask fetch-model` puts them; empty means the
	// default cache directory.
	BuiltinDir string `yaml:"builtin_dir"`
}

// Auto is the value of a setting that depends on the embedding model and
// takes what vaultask knows for the configured one: the prefixes of
// models.embedding_query_prefix and models.embedding_document_prefix (none
// for a model it does not know), and the distances of
// retrieval.confident_vector_gap (USE-lite's for a model it has not
// measured), and the coverage lines of retrieval.coverage_thin and
// retrieval.coverage_silent (the fallback fit's for a model without one).
const Auto = "auto"

// Retrieval sizes each stage of the pipeline: vector and full-text search,
// their fusion, graph expansion, reranking and the final context.
type Retrieval struct {
	GraphEnabled     bool    `yaml:"graph_enabled"`
	VectorTopK       int     `yaml:"vector_top_k" validate:"min=0"`
	FTSTopK          int     `yaml:"fts_top_k" validate:"min=0"`
	FusionTopK       int     `yaml:"fusion_top_k" validate:"min=1"`
	GraphMaxSiblings int     `yaml:"graph_max_siblings" validate:"min=0"`
	GraphDiscount    float64 `yaml:"graph_discount" validate:"gt=0,lte=1"`
	GraphMaxSlots    int     `yaml:"graph_max_slots" validate:"min=0"`
	// GraphMemberSlots are final slots only the notes a topic note's
	// clippings link to may take, when the topic note is a hit.
	GraphMemberSlots int `yaml:"graph_member_slots" validate:"min=0"`
	// GraphMapSlots are final slots only the notes a map of content links
	// to may take, when the map is a hit: a note linking to at least
	// GraphMapMinLinks notes.
	GraphMapSlots    int `yaml:"graph_map_slots" validate:"min=0"`
	GraphMapMinLinks int `yaml:"graph_map_min_links" validate:"min=1"`
	RerankTopK       int `yaml:"rerank_top_k" validate:"min=1"`
	FinalTopK        int `yaml:"final_top_k" validate:"min=1"`
	MaxChunksPerDoc  int `yaml:"max_chunks_per_doc" validate:"min=0"`
	// Fusion ranks by note (a note's best chunk places it) or by chunk.
	Fusion string `yaml:"fusion" validate:"oneof=note chunk"`
	// FusionBy fuses the two searches by their ranks (reciprocal rank
	// fusion) or by their scores (a convex combination of each arm's
	// normalised scores, VectorWeight the vector arm's weight); auto by
	// what was measured better with the embedding model (scores with
	// bge-small, ranks with the others).
	FusionBy string `yaml:"fusion_by" validate:"oneof=auto rank score"`
	// VectorWeight is "auto" (the weight measured for the embedding model)
	// or a number from 0 to 1.
	VectorWeight string `yaml:"vector_weight" validate:"auto_number=0 1"`
	// NoteSupport is, in a fusion by scores, the share of the fused score
	// of a note's second-best chunk that its best chunk gains: two
	// passages of a note that both answer say more than one.
	NoteSupport float64 `yaml:"note_support" validate:"gte=0,lte=1"`
	// FTSWeight multiplies the full-text list's reciprocal-rank
	// contributions; the vector list's weight is 1.
	FTSWeight float64 `yaml:"fts_weight" validate:"gt=0,lte=10"`
	// VectorMaxDistance keeps vector hits farther than this cosine distance
	// from the query out of the fusion; 0 means no limit.
	VectorMaxDistance float64 `yaml:"vector_max_distance" validate:"gte=0,lte=2"`
	// VectorQuery is what the vector search embeds: the question as asked,
	// or its keywords (the full-text query: no stopwords, no punctuation).
	VectorQuery string `yaml:"vector_query" validate:"oneof=question keywords"`
	// ConfidentBonus is added in the fusion to an arm's first note when the
	// arm is sure of it, in first-rank votes; 0 gives none. Full text is
	// sure when the note's BM25 leads the second note's by
	// ConfidentFTSMargin of itself, vector search when the note is
	// ConfidentVectorGap (cosine distance) nearer than the second.
	ConfidentBonus float64 `yaml:"confident_bonus" validate:"gte=0,lte=10"`
	// ConfidentFTSMargin is "auto" (the margin measured with the embedding
	// model: the stronger its vector search, the surer full text must be
	// to outvote it) or a number.
	ConfidentFTSMargin string `yaml:"confident_fts_margin" validate:"auto_number=0 1"`
	// ConfidentVectorGap is "auto" (the measured gap of the embedding
	// model: models' distances differ in scale) or a number.
	ConfidentVectorGap string `yaml:"confident_vector_gap" validate:"auto_number=0 2"`
	// LanguageVoteCut is the share of its fusion vote a vector hit loses
	// when the question is Swedish or Turkish and the hit's note is in
	// another of the three languages; 0 keeps every vote whole.
	LanguageVoteCut float64 `yaml:"language_vote_cut" validate:"gte=0,lte=1"`
	// CoverageThin and CoverageSilent are "auto" (the lines fitted for the
	// embedding model) or a probability: when the coverage judgement's
	// probability that the vault answers a question is below CoverageThin
	// the vault is thin on it (the web, when allowed, supplements it), and
	// below CoverageSilent it is silent.
	CoverageThin   string `yaml:"coverage_thin" validate:"auto_number=0 1"`
	CoverageSilent string `yaml:"coverage_silent" validate:"auto_number=0 1"`
	// The BM25 weights of a full-text match in each field of a chunk: its
	// note's title, aliases, the chunk's heading path, the note's path, its
	// topics, the chunk's body, and what the notes linking to the note say
	// there. 0 leaves the field out of the search; at least one must be
	// positive.
	BM25Title    float64 `yaml:"bm25_title" validate:"gte=0,lte=100"`
	BM25Aliases  float64 `yaml:"bm25_aliases" validate:"gte=0,lte=100"`
	BM25Headings float64 `yaml:"bm25_headings" validate:"gte=0,lte=100"`
	BM25Path     float64 `yaml:"bm25_path" validate:"gte=0,lte=100"`
	BM25Topics   float64 `yaml:"bm25_topics" validate:"gte=0,lte=100"`
	BM25Body     float64 `yaml:"bm25_body" validate:"gte=0,lte=100"`
	BM25Links    float64 `yaml:"bm25_links" validate:"gte=0,lte=100"`
}

// Web is the optional web search used when the vault is thin or silent on
// a question that allows it (retrieval.coverage_thin).
type Web struct {
	Enabled    bool   `yaml:"enabled"`
	Provider   string `yaml:"provider" validate:"oneof=duckduckgo tavily brave"`
	MaxResults int    `yaml:"max_results" validate:"min=1,max=20"`
	// BaseURL replaces the scheme and host of the provider's API (a proxy
	// in front of it); empty is the provider's own.
	BaseURL string `yaml:"base_url" validate:"omitempty,http_url"`
}

// API is the HTTP server of `vaultask serve`.
type API struct {
	Listen string `yaml:"listen" validate:"required"`
	// Key, when set, is required as a bearer token on the API, MCP, the
	// events and the status endpoints.
	Key Secret `yaml:"key"`
	// AdminKey, when set, is required as X-API-Key on /admin's data; without
	// it /admin's data is refused.
	AdminKey Secret `yaml:"admin_key"`
	// ObsidianVault is the vault's name in Obsidian: /chat then opens a cited
	// note in Obsidian and offers to save a conversation there.
	ObsidianVault string `yaml:"obsidian_vault"`
	// MaxConcurrent bounds the answers generated and MCP tool calls run at
	// once, together.
	MaxConcurrent int `yaml:"max_concurrent" validate:"min=1,max=256"`
	// ReservedForAnswers are slots of MaxConcurrent that MCP tool calls
	// never take, and ReservedForTools slots that answers never take: six
	// agents looping long searches once held every slot and chat got 429s.
	ReservedForAnswers int `yaml:"reserved_for_answers" validate:"min=0,max=256"`
	ReservedForTools   int `yaml:"reserved_for_tools" validate:"min=0,max=256"`
	// SlotWait is how long a request waits for a slot before its 429 or
	// tool error; 0 refuses at once.
	SlotWait time.Duration `yaml:"slot_wait"`
	// MaxWaiting bounds the answers, and apart the tool calls, waiting for
	// a slot at once; beyond it a request is refused at once.
	MaxWaiting int `yaml:"max_waiting" validate:"min=0,max=4096"`
	// MaxRequestBytes bounds a request body (413 beyond).
	MaxRequestBytes int `yaml:"max_request_bytes" validate:"min=1024"`
	// MaxQuestionBytes bounds the question searched (400 beyond): 16 KiB
	// holds a question with a pasted page or error log; longer is a
	// document, and each KiB costs query embedding and search time.
	MaxQuestionBytes int `yaml:"max_question_bytes" validate:"min=256"`
	// MaxTranscriptBytes bounds the question with the recent turns sent to
	// the generation model (400 beyond): 128 KiB is about 32k tokens, what
	// a common model's context holds beside the passages.
	MaxTranscriptBytes int `yaml:"max_transcript_bytes" validate:"min=1024"`
	// CORSOrigins are the browser origins allowed to call the API, such as
	// app://obsidian.md; empty sends no CORS headers. A page of another
	// origin may not send anything but GET.
	CORSOrigins []string `yaml:"cors_origins" validate:"dive,required,origin"`
	// TrustedHosts are the host names vaultask is reached by besides IP
	// addresses and localhost (a NAS's name, a reverse proxy's). Without
	// api.key any other name is refused, as a DNS-rebinding page sends one.
	TrustedHosts []string `yaml:"trusted_hosts" validate:"dive,required,hostname_rfc1123"`
}

// MCP bounds what `vaultask serve` keeps in memory of MCP sessions. A
// session's scope is in its id, so one whose state was dropped goes on
// working; the state is only a cache.
type MCP struct {
	// MaxSessions is how many sessions' state is kept; beyond it the least
	// recently used is dropped.
	MaxSessions int `yaml:"max_sessions" validate:"min=1,max=1000000"`
	// SessionIdle is how long a session's state is kept unused.
	SessionIdle time.Duration `yaml:"session_idle"`
}

// Log configures the process-wide slog handler.
type Log struct {
	Level  string `yaml:"level" validate:"oneof=debug info warn error"`
	Format string `yaml:"format" validate:"oneof=text json"`
}

// Default returns the built-in defaults, the base every layer applies to.
// config.yaml at the repository root repeats them; a test keeps the two equal.
func Default() Config {
	return Config{
		Vault: Vault{
			Source:   "couchdb",
			URL:      "http://127.0.0.1:5984",
			Database: "obsidian",
			Auth:     "basic",
		},
		Corpus: Corpus{
			Include: []string{"**/*.md"},
			Exclude: []string{"00 inbox/**", "**/.trash/**"},
		},
		Sensitivity: Sensitivity{
			PersonalPaths:  []string{},
			FrontmatterKey: "sensitivity",
		},
		Index: Index{
			Path:              "/data/vaultask.db",
			ReconcileInterval: time.Hour,
		},
		Models: Models{
			Generation:           "openrouter/google/gemini-2.5-flash",
			RerankKind:           "chat",
			RerankBudget:         1500 * time.Millisecond,
			GenerationTimeout:    60 * time.Second,
			GenerationVerdict:    true,
			RerankBatch:          10,
			Embedding:            "builtin/bge-small-en-v1.5",
			EmbeddingQueryPrefix: Auto, EmbeddingDocumentPrefix: Auto,
		},
		Retrieval: Retrieval{
			GraphEnabled:       true,
			VectorTopK:         40,
			FTSTopK:            40,
			FusionTopK:         20,
			GraphMaxSiblings:   5,
			GraphDiscount:      0.7,
			GraphMaxSlots:      0,
			GraphMemberSlots:   1,
			GraphMapSlots:      0,
			GraphMapMinLinks:   10,
			RerankTopK:         30,
			FinalTopK:          8,
			MaxChunksPerDoc:    2,
			Fusion:             "chunk",
			FusionBy:           Auto,
			VectorWeight:       Auto,
			NoteSupport:        0.3,
			VectorQuery:        "question",
			ConfidentBonus:     2,
			ConfidentFTSMargin: Auto,
			ConfidentVectorGap: Auto,
			LanguageVoteCut:    1,
			CoverageThin:       Auto,
			CoverageSilent:     Auto,
			FTSWeight:          1,
			BM25Title:          0.5,
			BM25Headings:       0.5,
			BM25Path:           0.5,
			BM25Topics:         0.5,
			BM25Body:           1,
			BM25Links:          0.5,
		},
		Web: Web{
			Provider:   "duckduckgo",
			MaxResults: 3,
		},
		API: API{Listen: ":8080", MaxConcurrent: 4, ReservedForAnswers: 1, ReservedForTools: 1, SlotWait: 5 * time.Second, MaxWaiting: 16, MaxRequestBytes: 1 << 20, MaxQuestionBytes: 16 << 10, MaxTranscriptBytes: 128 << 10, CORSOrigins: []string{}, TrustedHosts: []string{}},
		MCP: MCP{MaxSessions: 1000, SessionIdle: 30 * time.Minute},
		Log: Log{Level: "info", Format: "text"},
	}
}
