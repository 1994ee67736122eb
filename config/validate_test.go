package config

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string // substrings of the error; none means valid
	}{
		{
			name:   "defaults",
			change: func(c *Config) {},
		},
		{
			name:   "rerank_top_k below final_top_k",
			change: func(c *Config) { c.Retrieval.RerankTopK = 5 },
			want:   []string{"retrieval.rerank_top_k (5) must be >= retrieval.final_top_k (8)"},
		},
		{
			name:   "fusion_top_k above both searches",
			change: func(c *Config) { c.Retrieval.VectorTopK, c.Retrieval.FTSTopK = 10, 5 },
			want:   []string{"retrieval.fusion_top_k (20) must be <= retrieval.vector_top_k + retrieval.fts_top_k (10 + 5)"},
		},
		{
			name:   "graph_max_slots above final_top_k",
			change: func(c *Config) { c.Retrieval.GraphMaxSlots = 9 },
			want:   []string{"retrieval.graph_max_slots (9) must be <= retrieval.final_top_k (8)"},
		},
		{
			name:   "graph slots together above final_top_k",
			change: func(c *Config) { c.Retrieval.GraphMapSlots = 8 },
			want: []string{"retrieval.graph_max_slots + retrieval.graph_member_slots + retrieval.graph_map_slots (0 + 1 + 8) " +
				"must be <= retrieval.final_top_k (8)"},
		},
		{
			name: "every bm25 field weight zero",
			change: func(c *Config) {
				r := &c.Retrieval
				r.BM25Title, r.BM25Headings, r.BM25Path, r.BM25Topics, r.BM25Body, r.BM25Links = 0, 0, 0, 0, 0, 0
			},
			want: []string{"retrieval.bm25_* are all 0: full-text search would search no field (set fts_top_k to 0 to switch it off)"},
		},
		{
			name:   "bm25 weight negative",
			change: func(c *Config) { c.Retrieval.BM25Links = -1 },
			want:   []string{"retrieval.bm25_links (-1) must be >= 0"},
		},
		{
			name:   "graph_discount zero",
			change: func(c *Config) { c.Retrieval.GraphDiscount = 0 },
			want:   []string{"retrieval.graph_discount (0) must be > 0"},
		},
		{
			name:   "graph_discount above one",
			change: func(c *Config) { c.Retrieval.GraphDiscount = 1.5 },
			want:   []string{"retrieval.graph_discount (1.5) must be <= 1"},
		},
		{
			name:   "graph_discount one",
			change: func(c *Config) { c.Retrieval.GraphDiscount = 1 },
		},
		{
			name:   "final_top_k zero",
			change: func(c *Config) { c.Retrieval.FinalTopK = 0 },
			want:   []string{"retrieval.final_top_k (0) must be >= 1"},
		},
		{
			name:   "every problem is reported",
			change: func(c *Config) { c.Retrieval.FinalTopK, c.Log.Level, c.Web.MaxResults = 0, "verbose", 0 },
			want: []string{
				"retrieval.final_top_k (0) must be >= 1",
				`log.level "verbose" must be one of debug, info, warn, error`,
				"web.max_results (0) must be >= 1",
			},
		},
		{
			name:   "zero reconcile interval",
			change: func(c *Config) { c.Index.ReconcileInterval = 0 },
			want:   []string{"index.reconcile_interval (0s) must be at least 1m"},
		},
		{
			name:   "negative reconcile interval",
			change: func(c *Config) { c.Index.ReconcileInterval = -time.Minute },
			want:   []string{"index.reconcile_interval (-1m0s) must be at least 1m"},
		},
		{
			name:   "reconcile interval of a nanosecond",
			change: func(c *Config) { c.Index.ReconcileInterval = time.Nanosecond },
			want:   []string{"index.reconcile_interval (1ns) must be at least 1m"},
		},
		{
			name:   "reconcile interval of a minute",
			change: func(c *Config) { c.Index.ReconcileInterval = time.Minute },
		},
		{
			name: "globs rooted at /",
			change: func(c *Config) {
				c.Sensitivity.PersonalPaths = []string{"/Journal/**", "Tastings/**"}
				c.Corpus.Include = []string{"/**/*.md"}
				c.Corpus.Exclude = []string{"//inbox/**"}
			},
			want: []string{
				`sensitivity.personal_paths "/Journal/**": vault paths are relative and never start with '/': write "Journal/**"`,
				`corpus.include "/**/*.md": vault paths are relative and never start with '/': write "**/*.md"`,
				`corpus.exclude "//inbox/**": vault paths are relative and never start with '/': write "inbox/**"`,
			},
		},
		{
			name:   "embedding on ollama",
			change: func(c *Config) { c.Models.Embedding = "ollama/nomic-embed-text" },
		},
		{
			name: "embedding on ollama elsewhere",
			change: func(c *Config) {
				c.Models.Embedding, c.Models.EmbeddingBaseURL = "ollama/nomic-embed-text", "http://ollama:11434"
			},
		},
		{
			name:   "embedding base url not http",
			change: func(c *Config) { c.Models.Embedding, c.Models.EmbeddingBaseURL = "ollama/x", "ollama:11434" },
			want:   []string{`models.embedding_base_url "ollama:11434" is not an http or https URL`},
		},
		{
			name:   "model id without provider",
			change: func(c *Config) { c.Models.Generation = "gpt-4o" },
			want:   []string{`models.generation "gpt-4o" is not a model id: want provider/name`},
		},
		{
			name:   "model id without name",
			change: func(c *Config) { c.Models.Embedding = "ollama/" },
			want:   []string{`models.embedding "ollama/" is not a model id`},
		},
		{
			name:   "rerank model",
			change: func(c *Config) { c.Models.Rerank = "openrouter/cohere/rerank-v3.5" },
		},
		{
			name: "rerank cross-encoder on llama-server",
			change: func(c *Config) {
				c.Models.Rerank, c.Models.RerankKind, c.Models.RerankBaseURL = "llamacpp/bge-reranker-v2-m3", "cross-encoder", "http://gpu-box:8081/v1"
			},
		},
		{
			name: "rerank kind, budget and batch out of range",
			change: func(c *Config) {
				c.Models.RerankKind, c.Models.RerankBudget, c.Models.RerankBatch = "cohere", 0, 0
			},
			want: []string{"models.rerank_kind", "models.rerank_budget (0s) must be more than 0 and at most 1m0s", "models.rerank_batch (0) must be >= 1"},
		},
		{
			name:   "rerank budget too long",
			change: func(c *Config) { c.Models.RerankBudget = 2 * time.Minute },
			want:   []string{"models.rerank_budget (2m0s) must be more than 0 and at most 1m0s"},
		},
		{
			name:   "embedding_dim zero is the model's own",
			change: func(c *Config) { c.Models.EmbeddingDim = 0 },
		},
		{
			name:   "embedding_dim negative",
			change: func(c *Config) { c.Models.EmbeddingDim = -1 },
			want:   []string{"models.embedding_dim (-1) must be >= 0"},
		},
		{
			name:   "invalid include glob",
			change: func(c *Config) { c.Corpus.Include = []string{"**/*.md", "notes/[a-"} },
			want:   []string{`corpus.include[1] "notes/[a-" is not a valid glob pattern`},
		},
		{
			name:   "invalid exclude glob",
			change: func(c *Config) { c.Corpus.Exclude = []string{"{a,b"} },
			want:   []string{`corpus.exclude[0] "{a,b" is not a valid glob pattern`},
		},
		{
			name:   "invalid personal glob",
			change: func(c *Config) { c.Sensitivity.PersonalPaths = []string{"Tastings/**", "Journal/[0-9"} },
			want:   []string{`sensitivity.personal_paths[1] "Journal/[0-9" is not a valid glob pattern`},
		},
		{
			name:   "cors origin with a trailing slash",
			change: func(c *Config) { c.API.CORSOrigins = []string{"app://obsidian.md", "https://notes.example/"} },
			want:   []string{`api.cors_origins[1] "https://notes.example/" is not an origin: want scheme://host[:port]`},
		},
		{
			name:   "cors origin without a scheme",
			change: func(c *Config) { c.API.CORSOrigins = []string{"notes.example"} },
			want:   []string{`api.cors_origins[0] "notes.example" is not an origin`},
		},
		{
			name:   "cors origins",
			change: func(c *Config) { c.API.CORSOrigins = []string{"app://obsidian.md", "http://localhost:5173"} },
		},
		{
			name:   "empty glob",
			change: func(c *Config) { c.Sensitivity.PersonalPaths = []string{""} },
			want:   []string{"sensitivity.personal_paths[0] must not be empty"},
		},
		{
			name:   "no include patterns",
			change: func(c *Config) { c.Corpus.Include = []string{} },
			want:   []string{"corpus.include must have at least 1 item(s)"},
		},
		{
			name:   "unknown vault source",
			change: func(c *Config) { c.Vault.Source = "dropbox" },
			want:   []string{`vault.source "dropbox" must be one of couchdb, folder`},
		},
		{
			name:   "folder source without path",
			change: func(c *Config) { c.Vault.Source = "folder" },
			want:   []string{"vault.path must be set when vault.source is folder"},
		},
		{
			name:   "couchdb source without url or database",
			change: func(c *Config) { c.Vault.URL, c.Vault.Database = "", "" },
			want:   []string{"vault.url must be set when vault.source is couchdb", "vault.database must be set when vault.source is couchdb"},
		},
		{
			name:   "couchdb url not http",
			change: func(c *Config) { c.Vault.URL = "couchdb.lan:5984" },
			want:   []string{`vault.url "couchdb.lan:5984" is not an http or https URL`},
		},
		{
			name:   "empty index path",
			change: func(c *Config) { c.Index.Path = "" },
			want:   []string{"index.path must not be empty"},
		},
		{
			name:   "unknown web provider",
			change: func(c *Config) { c.Web.Provider = "google" },
			want:   []string{`web.provider "google" must be one of duckduckgo`},
		},
		{
			name:   "a coverage line past a probability",
			change: func(c *Config) { c.Retrieval.CoverageThin = "1.5" },
			want:   []string{`retrieval.coverage_thin "1.5" must be auto or a number from 0 to 1`},
		},
		{
			name: "settings that are neither auto nor a number in range",
			change: func(c *Config) {
				c.Retrieval.CoverageSilent = "NaN"
				c.Retrieval.ConfidentVectorGap = "Auto"
			},
			want: []string{`retrieval.coverage_silent "NaN" must be auto or a number from 0 to 1`,
				`retrieval.confident_vector_gap "Auto" must be auto or a number from 0 to 2`},
		},
		{
			name: "settings given as numbers",
			change: func(c *Config) {
				c.Retrieval.CoverageThin, c.Retrieval.CoverageSilent, c.Retrieval.ConfidentVectorGap = "0.3", "0.05", "0"
			},
		},
		{
			name: "a silent line above the thin line",
			change: func(c *Config) {
				c.Retrieval.CoverageThin, c.Retrieval.CoverageSilent = "0.2", "0.3"
			},
			want: []string{"retrieval.coverage_silent (0.3) must be <= retrieval.coverage_thin (0.2)"},
		},
		{
			name: "a gap past the largest cosine distance",
			change: func(c *Config) {
				c.Retrieval.ConfidentVectorGap = "2.5"
			},
			want: []string{`retrieval.confident_vector_gap "2.5" must be auto or a number from 0 to 2`},
		},
		{
			name: "a full-text margin past a share, or a word",
			change: func(c *Config) {
				c.Retrieval.ConfidentFTSMargin = "1.5"
			},
			want: []string{`retrieval.confident_fts_margin "1.5" must be auto or a number from 0 to 1`},
		},
		{
			name:   "listen without port",
			change: func(c *Config) { c.API.Listen = "8080" },
			want:   []string{`api.listen "8080" is not host:port`},
		},
		{
			name:   "listen port out of range",
			change: func(c *Config) { c.API.Listen = "127.0.0.1:99999" },
			want:   []string{`api.listen "127.0.0.1:99999" is not host:port`},
		},
		{
			name:   "listen on any free port",
			change: func(c *Config) { c.API.Listen = "127.0.0.1:0" },
		},
		{
			name:   "one slot with the default reservations: they shrink to fit (transport)",
			change: func(c *Config) { c.API.MaxConcurrent = 1 },
		},
		{
			name:   "one slot, none kept",
			change: func(c *Config) { c.API.MaxConcurrent, c.API.ReservedForAnswers, c.API.ReservedForTools = 1, 0, 0 },
		},
		{
			name:   "negative reservation",
			change: func(c *Config) { c.API.ReservedForTools = -1 },
			want:   []string{"api.reserved_for_tools (-1) must be >= 0"},
		},
		{
			name:   "slot wait too long",
			change: func(c *Config) { c.API.SlotWait = 2 * time.Minute },
			want:   []string{"api.slot_wait (2m0s) must be from 0 to 1m0s"},
		},
		{
			name:   "negative slot wait",
			change: func(c *Config) { c.API.SlotWait = -time.Second },
			want:   []string{"api.slot_wait (-1s) must be from 0 to 1m0s"},
		},
		{
			name:   "empty listen",
			change: func(c *Config) { c.API.Listen = "" },
			want:   []string{"api.listen must not be empty"},
		},
		{
			name:   "unknown log format",
			change: func(c *Config) { c.Log.Format = "logfmt" },
			want:   []string{`log.format "logfmt" must be one of text, json`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.change(&c)
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate succeeded, want an error")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
		})
	}
}
