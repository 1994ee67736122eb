package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-playground/validator/v10"
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
	// An origin matches a browser's Origin header only as the browser writes
	// it: scheme://host[:port], no path, not even a trailing slash.
	_ = v.RegisterValidation("origin", func(fl validator.FieldLevel) bool {
		u, err := url.Parse(fl.Field().String())
		return err == nil && u.Scheme != "" && u.Host != "" && u.Path == "" && u.RawPath == "" && !u.ForceQuery && u.RawQuery == "" && u.Fragment == "" && u.User == nil
	})
	_ = v.RegisterValidation("model_id", func(fl validator.FieldLevel) bool {
		provider, name, found := strings.Cut(fl.Field().String(), "/")
		return found && provider != "" && name != ""
	})
	_ = v.RegisterValidation("auto_number", autoNumber)
	return v
}

// autoNumber accepts Auto or a number within the tag's parameter, "MIN
// MAX" (a setting whose default depends on the embedding model).
func autoNumber(fl validator.FieldLevel) bool {
	s := fl.Field().String()
	if s == Auto {
		return true
	}
	lo, hi, _ := strings.Cut(fl.Param(), " ")
	n, err := strconv.ParseFloat(s, 64)
	minimum, errLo := strconv.ParseFloat(lo, 64)
	maximum, errHi := strconv.ParseFloat(hi, 64)
	return err == nil && errLo == nil && errHi == nil && n >= minimum && n <= maximum
}

// ModelPolicy knows the model providers; it lives with the model clients
// (llm), so config checks only the shape provider/name itself.
type ModelPolicy interface {
	// CheckModelID rejects a model id whose provider is unknown.
	CheckModelID(id string) error
	// CheckLocalEmbedding rejects an embedding model that would send notes
	// to a hosted API.
	CheckLocalEmbedding(model, baseURL string) error
}

// ValidateModels checks the model settings against the providers p knows,
// naming the field of every problem.
func (c Config) ValidateModels(p ModelPolicy) error {
	var errs []error
	for _, f := range []struct{ path, id string }{
		{"models.generation", c.Models.Generation},
		{"models.rerank", c.Models.Rerank},
		{"models.embedding", c.Models.Embedding},
	} {
		if f.id == "" {
			continue
		}
		if err := p.CheckModelID(f.id); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.path, err))
		}
	}
	if len(errs) == 0 {
		if err := p.CheckLocalEmbedding(c.Models.Embedding, c.Models.EmbeddingBaseURL); err != nil {
			errs = append(errs, fmt.Errorf("models.embedding: %w (models.embedding_base_url names your own server)", err))
		}
	}
	return errors.Join(errs...)
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
		return fmt.Errorf("%s %q is not a model id: want provider/name", path, fe.Value())
	case "origin":
		return fmt.Errorf("%s %q is not an origin: want scheme://host[:port] as a browser sends it, with no path or trailing slash", path, fe.Value())
	case "http_url":
		return fmt.Errorf("%s %q is not an http or https URL", path, fe.Value())
	case "auto_number":
		lo, hi, _ := strings.Cut(fe.Param(), " ")
		return fmt.Errorf("%s %q must be %s or a number from %s to %s", path, fe.Value(), Auto, lo, hi)
	case "min", "gte":
		if fe.Kind() == reflect.Slice {
			return fmt.Errorf("%s must have at least %s item(s)", path, fe.Param())
		}
		return fmt.Errorf("%s (%v) must be >= %s", path, fe.Value(), fe.Param())
	case "gt":
		return fmt.Errorf("%s (%v) must be > %s", path, fe.Value(), fe.Param())
	case "lte", "max":
		return fmt.Errorf("%s (%v) must be <= %s", path, fe.Value(), fe.Param())
	}
	return fmt.Errorf("%s (%v) fails the %s check", path, fe.Value(), fe.Tag())
}

// MinReconcileInterval is the shortest index.reconcile_interval: a reconcile
// lists the whole database, and the follower pauses the feed while it runs.
const MinReconcileInterval = time.Minute

// MaxGenerationTimeout is the longest models.generation_timeout: an answer
// holds a slot that long at most.
const MaxGenerationTimeout = 30 * time.Minute

// MaxRerankBudget is the longest models.rerank_budget: a question waits
// that long for a rerank model that does not answer.
const MaxRerankBudget = time.Minute

// MaxSlotWait is the longest api.slot_wait: a client whose request waits
// longer for a slot is better told to come back.
const MaxSlotWait = time.Minute

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

	if c.Index.ReconcileInterval < MinReconcileInterval {
		add("index.reconcile_interval (%v) must be at least 1m: a shorter interval reconciles back to back and never follows the feed", c.Index.ReconcileInterval)
	}
	for _, g := range []struct {
		path  string
		globs []string
	}{
		{"sensitivity.personal_paths", c.Sensitivity.PersonalPaths},
		{"corpus.include", c.Corpus.Include},
		{"corpus.exclude", c.Corpus.Exclude},
	} {
		for _, glob := range g.globs {
			if strings.HasPrefix(glob, "/") {
				add("%s %q: vault paths are relative and never start with '/': write %q", g.path, glob, strings.TrimLeft(glob, "/"))
			}
		}
	}

	if d := c.Models.GenerationTimeout; d < time.Second || d > MaxGenerationTimeout {
		add("models.generation_timeout (%v) must be from 1s to %v: it bounds one answer's request to the generation model", d, MaxGenerationTimeout)
	}
	if b := c.Models.RerankBudget; b <= 0 || b > MaxRerankBudget {
		add("models.rerank_budget (%v) must be more than 0 and at most %v: it is added to every question when the rerank model is slow", b, MaxRerankBudget)
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
	if r.GraphMaxSlots+r.GraphMemberSlots+r.GraphMapSlots > r.FinalTopK {
		add("retrieval.graph_max_slots + retrieval.graph_member_slots + retrieval.graph_map_slots (%d + %d + %d) must be <= retrieval.final_top_k (%d)",
			r.GraphMaxSlots, r.GraphMemberSlots, r.GraphMapSlots, r.FinalTopK)
	}
	if thin, err := strconv.ParseFloat(r.CoverageThin, 64); err == nil {
		if silent, err := strconv.ParseFloat(r.CoverageSilent, 64); err == nil && silent > thin {
			add("retrieval.coverage_silent (%g) must be <= retrieval.coverage_thin (%g): a question the vault is silent on is thin too", silent, thin)
		}
	}
	if r.BM25Title+r.BM25Aliases+r.BM25Headings+r.BM25Path+r.BM25Topics+r.BM25Body+r.BM25Links <= 0 {
		add("retrieval.bm25_* are all 0: full-text search would search no field (set fts_top_k to 0 to switch it off)")
	}

	if w := c.API.SlotWait; w < 0 || w > MaxSlotWait {
		add("api.slot_wait (%v) must be from 0 to %v: a request waits that long for a slot before its 429", w, MaxSlotWait)
	}
	if c.MCP.SessionIdle < time.Second {
		add("mcp.session_idle (%v) must be at least 1s: a session's state would be dropped between its requests", c.MCP.SessionIdle)
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
