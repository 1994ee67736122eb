package config_test

import (
	"strings"
	"testing"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/llm"
)

// The model rules come from llm, the one package that knows providers.
func TestValidateModels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*config.Config)
		want   []string
	}{
		{name: "defaults", change: func(*config.Config) {}},
		{
			name:   "embedding on openrouter",
			change: func(c *config.Config) { c.Models.Embedding = "openrouter/openai/text-embedding-3-small" },
			want:   []string{"models.embedding", "hosted API", "personal ones included", "models.embedding_base_url"},
		},
		{
			name:   "embedding on openai",
			change: func(c *config.Config) { c.Models.Embedding = "openai/text-embedding-3-small" },
			want:   []string{"models.embedding", "hosted API"},
		},
		{
			name: "embedding on the operator's own OpenAI-compatible server",
			change: func(c *config.Config) {
				c.Models.Embedding, c.Models.EmbeddingBaseURL = "openai/bge-m3", "http://gpu-box.lan:8000/v1"
			},
		},
		{name: "embedding on ollama", change: func(c *config.Config) { c.Models.Embedding = "ollama/nomic-embed-text" }},
		{
			name:   "builtin embedding with a base url",
			change: func(c *config.Config) { c.Models.EmbeddingBaseURL = "http://ollama:11434" },
			want:   []string{"models.embedding", "models.embedding_base_url"},
		},
		{
			name:   "unknown provider",
			change: func(c *config.Config) { c.Models.Rerank = "cohere/rerank-v3" },
			want:   []string{"models.rerank", `unknown provider "cohere"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default()
			tc.change(&c)
			err := c.ValidateModels(llm.Policy{})
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("ValidateModels: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("ValidateModels accepted it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
