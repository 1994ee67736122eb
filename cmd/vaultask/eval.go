package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vaultask/vaultask/cmd/ragconfig"
	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/eval"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/rag"
)

const evalHelp = `Usage:
  vaultask eval retrieval --questions FILE.tsv [--questions FILE.tsv]... [--k 8] [--ab key=value[,key=value…]]... [--rerank-url URL] [--json]
  vaultask eval web-trigger --questions FILE.tsv [--questions FILE.tsv]... [--allow-web] [--verdict] [--json | --features]

FILE.tsv holds one question per line, a TAB, then the paths of the notes that
answer it separated by '|'; no paths means the vault does not cover it. Lines
starting with '#' are comments; '# group: NAME' puts the questions after it in
group NAME. Run either with --help for its flags.
`

func runEval(ctx context.Context, m *Main, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "retrieval":
			return m.evalRetrieval(ctx, args[1:])
		case "web-trigger":
			return m.evalWebTrigger(ctx, args[1:])
		case "help", "-h", "--help":
			fmt.Fprint(m.Stderr, evalHelp)
			return errHelp
		}
	}
	fmt.Fprint(m.Stderr, evalHelp)
	if len(args) == 0 {
		return errUsage
	}
	return fmt.Errorf("eval: unknown evaluation %q: want retrieval or web-trigger", args[0])
}

// evalSession is what both evaluations read: the question files, the
// config, the index and the configured pipeline (retrieval only, no
// generation).
type evalSession struct {
	files    []*eval.QuestionFile
	cfg      config.Config
	store    *index.Store
	pipeline *rag.Pipeline
}

// openEval reads the question files, then the config, and lets check look
// at the config before the index is opened, so that bad input fails fast;
// then it refuses acceptable paths the index does not hold.
func (m *Main) openEval(ctx context.Context, cfgPath string, paths []string, generate bool, check func(config.Config) error) (*evalSession, error) {
	if len(paths) == 0 {
		return nil, errors.New("--questions FILE.tsv is required")
	}
	s := &evalSession{}
	for _, p := range paths {
		f, err := eval.ReadQuestions(p)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
	}
	var err error
	if s.cfg, err = m.loadConfig(cfgPath); err != nil {
		return nil, err
	}
	if err := check(s.cfg); err != nil {
		return nil, err
	}
	log := newLogger(m.Stderr, s.cfg.Log)
	opts, err := storeOptions(s.cfg, log)
	if err != nil {
		return nil, err
	}
	if s.store, err = openExisting(ctx, opts); err != nil {
		return nil, err
	}
	s.pipeline, err = m.newPipeline(s.cfg, s.store, log, generate, storeState(s.store))
	if err == nil {
		err = s.checkPaths(ctx)
	}
	if err == nil {
		// Every question searches through the vector shortlist, as serve's
		// do once it has read it, not the first ones by brute force.
		err = s.store.Search().WarmVectorSearch(ctx)
	}
	if err != nil {
		s.store.Close()
		return nil, err
	}
	return s, nil
}

// checkPaths refuses, in every file, acceptable paths the index does not hold.
func (s *evalSession) checkPaths(ctx context.Context) error {
	indexed, err := s.store.Browse().Paths(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.CheckPaths(indexed))
	}
	return errors.Join(errs...)
}

// appendTo is a flag's function that collects every value given.
func appendTo(values *[]string) func(string) error {
	return func(s string) error {
		*values = append(*values, s)
		return nil
	}
}

func (m *Main) evalRetrieval(ctx context.Context, args []string) error {
	fset, cfgPath := m.newFlagSet("eval retrieval", "eval retrieval --questions FILE.tsv [--questions FILE.tsv]... [--k 8] [--ab key=value[,key=value…]]... [--rerank-url URL] [--json]")
	var files, specs []string
	fset.Func("questions", "questions file: question, TAB, acceptable note paths separated by |; repeat to score several files against the one index", appendTo(&files))
	k := fset.Int("k", 8, "recall@k counts a question found when an acceptable note ranks among the first k notes")
	fset.Func("ab", "another arm: retrieval.* keys set for it, e.g. graph_enabled=false,max_chunks_per_doc=0, models.rerank=MODEL, or arms=fts|vector|hybrid; repeat for more arms", appendTo(&specs))
	rerankURL := fset.String("rerank-url", "", "API root of the rerank model of every arm with models.rerank, e.g. http://gpu-box:8081/v1 (default: models.rerank_base_url, else its provider's)")
	asJSON := fset.Bool("json", false, "print one JSON object")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if *k < 1 {
		return fmt.Errorf("--k %d: want at least 1", *k)
	}
	var arms []eval.Arm
	s, err := m.openEval(ctx, *cfgPath, files, false, func(cfg config.Config) (err error) {
		arms, err = eval.ParseArms(cfg, specs)
		return err
	})
	if err != nil {
		return err
	}
	defer s.store.Close()
	for i, a := range arms {
		p, err := s.pipeline.WithSettings(ragconfig.Settings(a.Config))
		if err != nil {
			return fmt.Errorf("--ab %q: %w", a.Settings, err)
		}
		if arms[i].Pipeline, err = m.withReranker(p, a.Config.Models, *rerankURL); err != nil {
			return fmt.Errorf("--ab %q: %w", a.Settings, err)
		}
	}
	rep, err := eval.Retrieval(ctx, s.cfg.Index.Path, s.files, arms, *k)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.WriteText(m.Stdout)
	return nil
}

// withReranker is p reranking as models say, at baseURL ("" for
// models.rerank_base_url or the provider's API root), or not reranking when
// models.rerank is "". Unlike ask, a rerank model that cannot be had is an
// error: the arm would measure nothing.
func (m *Main) withReranker(p *rag.Pipeline, models config.Models, baseURL string) (*rag.Pipeline, error) {
	if models.Rerank == "" {
		return p.WithReranker(nil), nil
	}
	rr, err := m.reranker(models, baseURL)
	if err != nil {
		return nil, fmt.Errorf("rerank model: %w", err)
	}
	return p.WithReranker(rr), nil
}

func (m *Main) evalWebTrigger(ctx context.Context, args []string) error {
	fset, cfgPath := m.newFlagSet("eval web-trigger", "eval web-trigger --questions FILE.tsv [--questions FILE.tsv]... [--allow-web] [--verdict] [--json | --features]")
	var paths []string
	fset.Func("questions", "questions file: question, TAB, acceptable note paths separated by | (none: the vault does not cover it); repeat for more", appendTo(&paths))
	allowWeb := fset.Bool("allow-web", false, "judge as a request that allows the web does, seeing open notes only (default: the whole vault, as the files' paths are)")
	asJSON := fset.Bool("json", false, "print the report as JSON")
	features := fset.Bool("features", false, "print each question's coverage features as JSON lines instead, for fitting a coverage model (devtools/cmd/coverage-fit)")
	verdicts := fset.Bool("verdict", false, "have the generation model (models.generation) read each question's passages and give its verdict, which decides, as in an answer")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if *asJSON && *features {
		return errors.New("--json and --features print different things: choose one")
	}
	s, err := m.openEval(ctx, *cfgPath, paths, *verdicts, func(config.Config) error { return nil })
	if err != nil {
		return err
	}
	defer s.store.Close()
	if *features {
		return eval.WriteFeatures(ctx, s.pipeline, s.files, *allowWeb, m.Stdout)
	}
	rep, err := eval.WebTrigger(ctx, s.pipeline, s.files, *allowWeb, *verdicts)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.WriteText(m.Stdout)
	return nil
}
