package llm

import (
	"errors"
	"fmt"
	"strings"
)

// provider is where a model id's prefix sends requests, and which
// environment variable holds its key.
type provider struct {
	name    string
	baseURL string // OpenAI-compatible API root; "" for the built-in embedder
	keyEnv  string // "" when the provider needs no key
	hosted  bool   // a cloud API: personal text must never be embedded there
}

// Key environment variables. config reserves the same names so they are not
// mistaken for unknown configuration keys.
const (
	EnvOpenRouterAPIKey = "VAULTASK_OPENROUTER_API_KEY"
	EnvOpenAIAPIKey     = "VAULTASK_OPENAI_API_KEY"
	EnvOllamaAPIKey     = "VAULTASK_OLLAMA_API_KEY"
)

var providers = []provider{
	{name: "builtin"},
	{name: "ollama", baseURL: "http://127.0.0.1:11434/v1", keyEnv: EnvOllamaAPIKey},
	// llama.cpp's llama-server: its own default port, 8080, is vaultask's,
	// so the README runs it on 8081.
	{name: "llamacpp", baseURL: "http://127.0.0.1:8081/v1"},
	{name: "openai", baseURL: "https://api.openai.com/v1", keyEnv: EnvOpenAIAPIKey, hosted: true},
	{name: "openrouter", baseURL: "https://openrouter.ai/api/v1", keyEnv: EnvOpenRouterAPIKey, hosted: true},
}

// ErrBadModelID is wrapped by every error about a malformed model id.
var ErrBadModelID = errors.New("bad model id")

// ErrEmbeddingNotLocal is an embedding model that cannot run where
// vaultask puts it: a hosted API, which would be sent every note, or the
// built-in model given a server URL.
var ErrEmbeddingNotLocal = errors.New("embedding model cannot run here")

// ModelID is a parsed model id such as "openrouter/google/gemini-2.5-flash":
// the provider prefix and the provider's own model name.
type ModelID struct {
	Provider string
	Name     string
}

func (id ModelID) String() string { return id.Provider + "/" + id.Name }

// ParseModelID splits a model id at its first slash and checks the provider.
func ParseModelID(s string) (ModelID, error) {
	p, name, ok := strings.Cut(s, "/")
	if !ok || p == "" || name == "" {
		return ModelID{}, fmt.Errorf("%w %q: want provider/name, provider one of %s", ErrBadModelID, s, providerNames())
	}
	if _, found := lookupProvider(p); !found {
		return ModelID{}, fmt.Errorf("%w %q: unknown provider %q, want one of %s", ErrBadModelID, s, p, providerNames())
	}
	return ModelID{Provider: p, Name: name}, nil
}

func lookupProvider(name string) (provider, bool) {
	for _, p := range providers {
		if p.name == name {
			return p, true
		}
	}
	return provider{}, false
}

func providerNames() string {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// CheckLocalEmbedding refuses an embedding model that would send notes to a
// cloud API. Embedding touches every note, personal ones included, so it must
// run on the built-in model, on Ollama, or on an OpenAI-compatible server the
// operator names with baseURL (their own machine).
func CheckLocalEmbedding(model, baseURL string) error {
	id, err := ParseModelID(model)
	if err != nil {
		return err
	}
	p, _ := lookupProvider(id.Provider)
	switch {
	case p.hosted && baseURL == "":
		return fmt.Errorf("%w: embedding model %s is a hosted API: embedding touches every note, personal ones included, so it must run locally: use a builtin/ model (builtin/bge-small-en-v1.5, the default) or an ollama/ model, or your own OpenAI-compatible server", ErrEmbeddingNotLocal, model)
	case id.Provider == "builtin" && baseURL != "":
		return fmt.Errorf("%w: embedding model %s runs inside vaultask, so a server URL (%s) means nothing to it: it is for ollama/ or OpenAI-compatible servers", ErrEmbeddingNotLocal, model, baseURL)
	}
	return nil
}

// Policy applies this package's provider rules to configuration
// (config.ModelPolicy), so config never needs to know a provider name.
type Policy struct{}

// CheckModelID rejects a malformed id or an unknown provider.
func (Policy) CheckModelID(id string) error {
	_, err := ParseModelID(id)
	return err
}

// CheckLocalEmbedding refuses an embedding model that would send notes to
// a cloud API (the package's CheckLocalEmbedding), for config's
// models.embedding and models.embedding_base_url.
func (Policy) CheckLocalEmbedding(model, baseURL string) error {
	return CheckLocalEmbedding(model, baseURL)
}

// SuggestedGenerationModels is the short list /admin offers for
// models.generation: well-known models of each provider that answers. Any
// other id of a known provider works as well.
var SuggestedGenerationModels = []string{
	"openrouter/google/gemini-2.5-flash",
	"openrouter/google/gemini-2.5-pro",
	"openrouter/anthropic/claude-sonnet-4.5",
	"openrouter/openai/gpt-4.1-mini",
	"openrouter/meta-llama/llama-3.3-70b-instruct",
	"openai/gpt-4.1-mini",
	"openai/gpt-4.1",
	"ollama/llama3.1:8b",
	"ollama/qwen2.5:7b",
	"ollama/mistral",
}
