package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/vaultask/vaultask/cmd/ragconfig"
	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/rag/web"
	"github.com/vaultask/vaultask/vault"
)

var (
	_ rag.Searcher     = (*index.Search)(nil)
	_ rag.CrossEncoder = (*llm.Client)(nil)
	_ rag.TextEmbedder = llm.Embedder(nil)

	_ rag.WebSearcher = webSearcher{}
)

// webSearcher adapts a web provider to the pipeline's WebSearcher.
type webSearcher struct{ p web.Provider }

func (w webSearcher) Search(ctx context.Context, query string, n int) ([]rag.WebResult, error) {
	results, err := w.p.Search(ctx, query, n)
	out := make([]rag.WebResult, len(results))
	for i, r := range results {
		out[i] = rag.WebResult(r)
	}
	return out, err
}

// traceHits is how many candidates --trace prints per stage.
const traceHits = 12

func runAsk(ctx context.Context, m *Main, args []string) error {
	fset, cfgPath := m.newFlagSet("ask", `ask "question" [--dry-run] [--allow-web=false] [--json] [--trace]`)
	dryRun := fset.Bool("dry-run", false, "retrieval only, no generation: print the ranked hits with provenance (vector/fts/graph), distance, sensitivity and path")
	allowWeb := fset.Bool("allow-web", true, "allow the web fallback; the question then sees open notes only (false: the whole vault, personal notes included, and never the web)")
	asJSON := fset.Bool("json", false, "print one JSON object instead of text; the answer is not streamed")
	trace := fset.Bool("trace", false, "show each stage's candidates and what the diversity cap, quota and rerank changed")
	question, err := parseQuestion(fset, args)
	if err != nil {
		return err
	}
	cfg, err := m.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	log := newLogger(m.Stderr, cfg.Log)
	opts, err := storeOptions(cfg, log)
	if err != nil {
		return err
	}
	store, err := openExisting(ctx, opts)
	if err != nil {
		return err
	}
	defer store.Close()
	p, err := m.newPipeline(cfg, store, log, !*dryRun, storeState(store))
	if err != nil {
		return err
	}
	q := rag.Question{Text: question, AllowWeb: *allowWeb}

	if *dryRun {
		r, err := p.Retrieve(ctx, q)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeAskJSON(m.Stdout, r, nil, *trace)
		}
		printRetrieval(m.Stdout, r)
		if *trace {
			fmt.Fprintln(m.Stdout)
			r.Trace.WriteText(m.Stdout, traceHits)
		}
		return nil
	}

	stream := func(s string) error {
		_, err := io.WriteString(m.Stdout, s)
		return err
	}
	if *asJSON {
		stream = func(string) error { return nil }
	}
	a, err := p.Ask(ctx, q, stream)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeAskJSON(m.Stdout, a.Retrieval, a, *trace)
	}
	if !strings.HasSuffix(a.Text, "\n") {
		fmt.Fprintln(m.Stdout)
	}
	if *trace {
		fmt.Fprintln(m.Stdout)
		a.Retrieval.Trace.WriteText(m.Stdout, traceHits)
	}
	return nil
}

// parseQuestion parses flags before and after the question; the remaining
// words are the question. Everything after -- is question, so a question
// may start with '-'.
func parseQuestion(fs *flag.FlagSet, args []string) (string, error) {
	var words []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return "", errHelp
		}
		if err != nil {
			if strings.HasPrefix(err.Error(), "flag provided but not defined") {
				return "", fmt.Errorf("%w: %v; a question that starts with '-' goes after --, e.g. vaultask ask -- \"-v or --verbose?\"", errUsage, err)
			}
			return "", errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		if i := len(args) - fs.NArg() - 1; i >= 0 && args[i] == "--" {
			words = append(words, fs.Args()...)
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	q := strings.TrimSpace(strings.Join(words, " "))
	if q == "" {
		if len(words) > 0 {
			return "", fmt.Errorf("%w: the question is empty: write it after ask, e.g. vaultask ask \"how do I back up my vault?\"", errUsage)
		}
		fs.Usage()
		return "", errUsage
	}
	return q, nil
}

// newPipeline wires the answering pipeline from config. Each model that
// can't be had is a degradation said on stderr, never a failure: no
// embedder means full-text search only, no generation model (the offline
// default: no API key) means extractive answers, a broken rerank model
// means no rerank. generate false skips the generation model (a dry run).
// The pipeline holds a web searcher only when web.enabled; it then searches
// only for requests that allow the web.
func (m *Main) newPipeline(cfg config.Config, store *index.Store, log *slog.Logger, generate bool, state func(context.Context, vault.Scope) rag.IndexState) (*rag.Pipeline, error) {
	opts := rag.Options{Searcher: store.Search(), Settings: ragconfig.Settings(cfg), Limits: ragconfig.Limits(cfg), Logger: log, IndexState: state,
		NoVerdict: !cfg.Models.GenerationVerdict}
	if embs, err := m.queryEmbedders(cfg, store); len(embs) == 0 {
		fmt.Fprintf(m.Stderr, "note: no embedder (%v): full-text search only\n", err)
	} else {
		opts.Embedder = embs
	}
	if generate {
		if gen, err := llm.NewClient(cfg.Models.Generation, llm.Options{BaseURL: cfg.Models.GenerationBaseURL, Timeout: cfg.Models.GenerationTimeout, Getenv: m.getenv}); err != nil {
			fmt.Fprintf(m.Stderr, "note: no generation model (%v): answering with retrieved passages\n", err)
		} else {
			opts.Generator = chatModel{gen}
		}
	}
	if cfg.Models.Rerank != "" {
		if rr, err := m.reranker(cfg.Models, ""); err != nil {
			fmt.Fprintf(m.Stderr, "note: no rerank model (%v): fused order\n", err)
		} else {
			opts.Reranker = rr
		}
	}
	if cfg.Web.Enabled {
		provider, err := web.New(cfg.Web.Provider, m.getenv, web.Options{BaseURL: cfg.Web.BaseURL})
		if err != nil {
			return nil, fmt.Errorf("config: web: %w", err)
		}
		opts.Web = webSearcher{provider}
	}
	return rag.New(opts)
}

// reranker is the rerank stage models configure: models.rerank at baseURL
// (models.rerank_base_url when ""), scoring as models.rerank_kind says, in
// batches of models.rerank_batch within models.rerank_budget.
func (m *Main) reranker(models config.Models, baseURL string) (*rag.Reranker, error) {
	if baseURL == "" {
		baseURL = models.RerankBaseURL
	}
	c, err := llm.NewClient(models.Rerank, llm.Options{BaseURL: baseURL, Getenv: m.getenv})
	if err != nil {
		return nil, err
	}
	o := rag.RerankOptions{Batch: models.RerankBatch, Budget: models.RerankBudget}
	if models.RerankKind == "cross-encoder" {
		return rag.NewCrossEncoderReranker(c, o), nil
	}
	return rag.NewChatReranker(chatModel{c}, o), nil
}

func scopeText(r *rag.Retrieval) string {
	if r.Scope == vault.ScopeOpen {
		return "open notes only (the web fallback is allowed)"
	}
	return "the whole vault, personal notes included (no web)"
}

func printRetrieval(w io.Writer, r *rag.Retrieval) {
	fmt.Fprintf(w, "question: %s\n", r.Question)
	if r.Query != strings.TrimSpace(r.Question) {
		fmt.Fprintf(w, "query:    %s\n", r.Query)
	}
	fmt.Fprintf(w, "scope:    %s\n", scopeText(r))
	search := "vector and full text"
	if r.FullTextOnly {
		search = "full text only (no query vector)"
	}
	fmt.Fprintf(w, "search:   %s\n", search)
	fmt.Fprintf(w, "coverage: %s\n\n", coverageText(r.Coverage))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tscore\tfrom\tdistance\tsensitivity\tpath › section")
	for i, h := range r.Hits {
		dist := "-"
		if h.HasDistance {
			dist = fmt.Sprintf("%.3f", h.Distance)
		}
		label := h.Chunk.Path
		if h.Chunk.HeadingPath != "" {
			label += " › " + h.Chunk.HeadingPath
		}
		if reach := h.Reach(); reach != "" {
			label += " (" + reach + ")"
		}
		fmt.Fprintf(tw, "%d\t%.4f\t%s\t%s\t%s\t%s\n", i+1, h.Score, h.Provenance(), dist, h.Chunk.Sensitivity, label)
	}
	tw.Flush()
}

// coverageText says what the coverage judgement decided, and how sure it
// was.
func coverageText(c rag.Coverage) string {
	why := map[rag.Outcome]string{
		rag.OutcomeCovered:  "the vault answers this",
		rag.OutcomeThin:     "the vault says little on this",
		rag.OutcomeSilent:   "nothing in the vault is about this",
		rag.OutcomeIndexing: "the index is still reading the vault",
	}[c.Outcome]
	s := fmt.Sprintf("%s: %s (probability %.2f, %s)", c.Outcome, why, c.Score, c.Model)
	if c.Grey {
		s += "; near the line to thin: a generation model reads the passages and decides"
	}
	return s
}

func writeAskJSON(w io.Writer, r *rag.Retrieval, a *rag.Answer, withTrace bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rag.NewResult(r, a, withTrace))
}
