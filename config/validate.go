package config

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-playground/validator/v10"
)

// providers are the model providers a model id (provider/name) may name;
// hostedProviders are the cloud APIs among them, which must never receive
// the vault's notes for embedding.
var (
	providers       = []string{"builtin", "ollama", "openai", "openrouter"}
	hostedProviders = []string{"openai", "openrouter"}
)

// validate checks the `validate` struct tags; it caches per type and is safe
// for concurrent use, so one serves every call.
var validate = newValidator()

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	// Errors then name fields by their yaml path, as the operator writes them.
	v.RegisterTagNameFunc(yamlName)
	// RegisterValidation fails only for an empty tag or a nil function.
	_ = v.RegisterValidation("glob", func(fl validator.FieldLevel) bool {
		return doublestar.ValidatePattern(fl.Field().String())
	})
	_ = v.RegisterValidation("model_id", func(fl validator.FieldLevel) bool {
		_, ok := modelProvider(fl.Field().String())
		return ok
	})
	return v
}

// modelProvider returns the provider of a model id such as
// "openrouter/google/gemini-2.5-flash", and whether the id is well formed.
func modelProvider(id string) (string, bool) {
	provider, name, found := strings.Cut(id, "/")
	return provider, found && name != "" && slices.Contains(providers, provider)
}

// Validate checks every field and the rules between fields, returning all
// problems joined, each naming its fields by yaml path.
func (c Config) Validate() error {
	var errs []error
	var fieldErrs validator.ValidationErrors
	if err := validate.Struct(c); errors.As(err, &fieldErrs) {
		for _, fe := range fieldErrs {
			errs = append(errs, describeFieldError(fe))
		}
	} else if err != nil {
		return err
	}
	errs = append(errs, c.crossFieldErrors()...)
	return errors.Join(errs...)
}

func describeFieldError(fe validator.FieldError) error {
	// The namespace starts with the root type's name: "Config.retrieval.final_top_k".
	_, path, _ := strings.Cut(fe.Namespace(), ".")
	switch fe.Tag() {
	case "required":
		return fmt.Errorf("%s must not be empty", path)
	case "oneof":
		return fmt.Errorf("%s %q must be one of %s", path, fe.Value(), strings.ReplaceAll(fe.Param(), " ", ", "))
	case "glob":
		return fmt.Errorf("%s %q is not a valid glob pattern", path, fe.Value())
	case "model_id":
		return fmt.Errorf("%s %q is not a model id: want provider/name, provider one of %s", path, fe.Value(), strings.Join(providers, ", "))
	case "http_url":
		return fmt.Errorf("%s %q is not an http or https URL", path, fe.Value())
	case "min", "gte":
		if fe.Kind() == reflect.Slice {
			return fmt.Errorf("%s must have at least %s item(s)", path, fe.Param())
		}
		return fmt.Errorf("%s (%v) must be >= %s", path, fe.Value(), fe.Param())
	case "gt":
		return fmt.Errorf("%s (%v) must be > %s", path, fe.Value(), fe.Param())
	case "lte":
		return fmt.Errorf("%s (%v) must be <= %s", path, fe.Value(), fe.Param())
	}
	return fmt.Errorf("%s (%v) fails the %s check", path, fe.Value(), fe.Tag())
}

func (c Config) crossFieldErrors() []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}

	switch c.Vault.Source {
	case "couchdb":
		if c.Vault.URL == "" {
			add("vault.url must be set when vault.source is couchdb")
		}
		if c.Vault.Database == "" {
			add("vault.database must be set when vault.source is couchdb")
		}
	case "folder":
		if c.Vault.Path == "" {
			add("vault.path must be set when vault.source is folder")
		}
	}

	if provider, ok := modelProvider(c.Models.Embedding); ok {
		switch {
		case slices.Contains(hostedProviders, provider) && c.Models.EmbeddingBaseURL == "":
			add("models.embedding %q is a hosted API, but embedding runs locally: every note, personal ones included, "+
				"would be sent to a cloud service; use a builtin/ or ollama/ model, "+
				"or set models.embedding_base_url to your own OpenAI-compatible server", c.Models.Embedding)
		case provider == "builtin" && c.Models.EmbeddingBaseURL != "":
			add("models.embedding_base_url %q is set, but models.embedding %q runs in-process and calls no server",
				c.Models.EmbeddingBaseURL, c.Models.Embedding)
		}
	}

	r := c.Retrieval
	if r.RerankTopK < r.FinalTopK {
		add("retrieval.rerank_top_k (%d) must be >= retrieval.final_top_k (%d)", r.RerankTopK, r.FinalTopK)
	}
	if r.FusionTopK > r.VectorTopK+r.FTSTopK {
		add("retrieval.fusion_top_k (%d) must be <= retrieval.vector_top_k + retrieval.fts_top_k (%d + %d)",
			r.FusionTopK, r.VectorTopK, r.FTSTopK)
	}
	if r.GraphMaxSlots > r.FinalTopK {
		add("retrieval.graph_max_slots (%d) must be <= retrieval.final_top_k (%d)", r.GraphMaxSlots, r.FinalTopK)
	}

	if c.API.Listen != "" && !isListenAddr(c.API.Listen) {
		add("api.listen %q is not host:port, like :8080 or 127.0.0.1:8080", c.API.Listen)
	}
	return errs
}

// isListenAddr reports whether addr is what net.Listen takes for TCP with a
// numeric port; port 0, which picks a free port, is allowed for tests.
func isListenAddr(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	_, err = strconv.ParseUint(port, 10, 16)
	return err == nil
}
