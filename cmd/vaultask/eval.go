package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/rag"
)

const evalHelp = `Usage:
  vaultask eval retrieval --questions FILE.tsv [--k 8] [--ab key=value[,key=value…]]... [--json]
  vaultask eval web-trigger --questions FILE.tsv

FILE.tsv holds one question per line, a TAB, then the paths of the notes that
answer it separated by '|'; no paths means the vault does not cover it. Lines
starting with '#' are comments. Run either with --help for its flags.
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

// evalQuestion is one line of a questions file.
type evalQuestion struct {
	line int
	text string
	// acceptable are the paths of the notes that answer it; none when the
	// vault does not cover it.
	acceptable []string
}

func (q evalQuestion) covered() bool { return len(q.acceptable) > 0 }

// readQuestions reads and parses a questions file.
func readQuestions(path string) ([]evalQuestion, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseQuestions(path, data)
}

// parseQuestions parses the lines of a questions file: the question, a TAB,
// then acceptable note paths separated by |. Errors name the file and line.
func parseQuestions(path string, data []byte) ([]evalQuestion, error) {
	var qs []evalQuestion
	for i, line := range strings.Split(string(data), "\n") {
		at := fmt.Sprintf("%s:%d", path, i+1)
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		text, paths, ok := strings.Cut(line, "\t")
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: no TAB: want the question, a TAB, then note paths separated by | (none: not covered)", at)
		case strings.Contains(paths, "\t"):
			return nil, fmt.Errorf("%s: more than one TAB: want the question, a TAB, then note paths separated by |", at)
		case strings.TrimSpace(text) == "":
			return nil, fmt.Errorf("%s: empty question", at)
		}
		q := evalQuestion{line: i + 1, text: strings.TrimSpace(text)}
		if strings.TrimSpace(paths) != "" {
			for p := range strings.SplitSeq(paths, "|") {
				if p = strings.TrimSpace(p); p == "" {
					return nil, fmt.Errorf("%s: empty path in %q", at, paths)
				}
				q.acceptable = append(q.acceptable, p)
			}
		}
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return qs, nil
}

// checkPaths refuses acceptable paths the index does not hold: a typo
// would otherwise count as a miss on every arm.
func checkPaths(ctx context.Context, store *index.Store, file string, qs []evalQuestion) error {
	paths, err := store.Paths(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, q := range qs {
		for _, p := range q.acceptable {
			if _, found := slices.BinarySearch(paths, p); !found {
				errs = append(errs, fmt.Errorf("%s:%d: %s is not in the index", file, q.line, p))
			}
		}
	}
	return errors.Join(errs...)
}

// evalSession is what both evaluations read: the questions, the config,
// the index and the configured pipeline (retrieval only, no generation).
type evalSession struct {
	file      string
	questions []evalQuestion
	cfg       config.Config
	store     *index.Store
	pipeline  *rag.Pipeline
}

// openEval reads the questions, then the config, and lets check look at the
// config before the index is opened, so that bad input fails fast.
func (m *Main) openEval(ctx context.Context, cfgPath, file string, check func(config.Config) error) (*evalSession, error) {
	if file == "" {
		return nil, errors.New("--questions FILE.tsv is required")
	}
	qs, err := readQuestions(file)
	if err != nil {
		return nil, err
	}
	cfg, err := m.loadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	if err := check(cfg); err != nil {
		return nil, err
	}
	log := newLogger(m.Stderr, cfg.Log)
	store, err := openExisting(ctx, storeOptions(cfg, log))
	if err != nil {
		return nil, err
	}
	p, err := m.newPipeline(cfg, store, log, false)
	if err == nil {
		err = checkPaths(ctx, store, file, qs)
	}
	if err != nil {
		store.Close()
		return nil, err
	}
	return &evalSession{file: file, questions: qs, cfg: cfg, store: store, pipeline: p}, nil
}

// retrievalKeys are the retrieval.* keys an --ab arm may set, each to its
// field in config.Retrieval.
var retrievalKeys = map[string]func(r *config.Retrieval) any{
	"graph_enabled":      func(r *config.Retrieval) any { return &r.GraphEnabled },
	"vector_top_k":       func(r *config.Retrieval) any { return &r.VectorTopK },
	"fts_top_k":          func(r *config.Retrieval) any { return &r.FTSTopK },
	"fusion_top_k":       func(r *config.Retrieval) any { return &r.FusionTopK },
	"fusion":             func(r *config.Retrieval) any { return &r.Fusion },
	"fts_weight":         func(r *config.Retrieval) any { return &r.FTSWeight },
	"max_chunks_per_doc": func(r *config.Retrieval) any { return &r.MaxChunksPerDoc },
	"graph_max_siblings": func(r *config.Retrieval) any { return &r.GraphMaxSiblings },
	"graph_discount":     func(r *config.Retrieval) any { return &r.GraphDiscount },
	"graph_max_slots":    func(r *config.Retrieval) any { return &r.GraphMaxSlots },
	"rerank_top_k":       func(r *config.Retrieval) any { return &r.RerankTopK },
	"final_top_k":        func(r *config.Retrieval) any { return &r.FinalTopK },
}

// armsKey switches a search arm off: fts sets vector_top_k to 0, vector
// sets fts_top_k to 0, hybrid keeps both as they are.
const armsKey = "arms"

func setRetrievalKey(r *config.Retrieval, key, value string) error {
	field, ok := retrievalKeys[key]
	if !ok {
		names := append(slices.Sorted(maps.Keys(retrievalKeys)), armsKey)
		return fmt.Errorf("unknown key %q: want one of %s", key, strings.Join(names, ", "))
	}
	var err error
	switch p := field(r).(type) {
	case *bool:
		if *p, err = strconv.ParseBool(value); err != nil {
			return fmt.Errorf("%s=%q: not a boolean (true or false)", key, value)
		}
	case *int:
		if *p, err = strconv.Atoi(value); err != nil {
			return fmt.Errorf("%s=%q: not an integer", key, value)
		}
	case *float64:
		if *p, err = strconv.ParseFloat(value, 64); err != nil {
			return fmt.Errorf("%s=%q: not a number", key, value)
		}
	case *string:
		*p = value
	}
	return nil
}

// armConfig is base with one --ab spec applied and validated like any
// configuration, so errors name the key.
func armConfig(base config.Config, spec string) (config.Config, error) {
	cfg := base
	seen := map[string]bool{}
	arms := ""
	for kv := range strings.SplitSeq(spec, ",") {
		key, value, ok := strings.Cut(kv, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !ok || key == "":
			return cfg, fmt.Errorf("--ab %q: want key=value[,key=value…]", spec)
		case seen[key]:
			return cfg, fmt.Errorf("--ab %q: %s given twice", spec, key)
		case key == armsKey:
			arms = value
		default:
			if err := setRetrievalKey(&cfg.Retrieval, key, value); err != nil {
				return cfg, fmt.Errorf("--ab %q: %w", spec, err)
			}
		}
		seen[key] = true
	}
	switch arms {
	case "", "hybrid":
	case "fts":
		cfg.Retrieval.VectorTopK = 0
	case "vector":
		cfg.Retrieval.FTSTopK = 0
	default:
		return cfg, fmt.Errorf("--ab %q: %s=%q: want fts, vector or hybrid", spec, armsKey, arms)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("--ab %q: %w", spec, err)
	}
	return cfg, nil
}

// evalArm is one set of retrieval settings under evaluation.
type evalArm struct {
	Label    string `json:"label"`    // A for the configured settings, then B, C, … per --ab
	Settings string `json:"settings"` // the --ab text, or the configured retrieval.* values
	p        *rag.Pipeline
}

func (m *Main) evalRetrieval(ctx context.Context, args []string) error {
	fset, cfgPath := m.newFlagSet("eval retrieval", "eval retrieval --questions FILE.tsv [--k 8] [--ab key=value[,key=value…]]... [--json]")
	file := fset.String("questions", "", "questions file: question, TAB, acceptable note paths separated by |")
	k := fset.Int("k", 8, "recall@k counts a question found when an acceptable note ranks among the first k notes")
	var specs []string
	fset.Func("ab", "another arm: retrieval.* keys set for it, e.g. graph_enabled=false,max_chunks_per_doc=0, or arms=fts|vector|hybrid; repeat for more arms", func(s string) error {
		specs = append(specs, s)
		return nil
	})
	asJSON := fset.Bool("json", false, "print one JSON object")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if *k < 1 {
		return fmt.Errorf("--k %d: want at least 1", *k)
	}
	if len(specs) > 'Z'-'B'+1 {
		return fmt.Errorf("%d --ab arms: at most %d, labelled B to Z", len(specs), 'Z'-'B'+1)
	}
	var armCfgs []config.Config
	s, err := m.openEval(ctx, *cfgPath, *file, func(cfg config.Config) error {
		for _, spec := range specs {
			c, err := armConfig(cfg, spec)
			if err != nil {
				return err
			}
			armCfgs = append(armCfgs, c)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer s.store.Close()

	arms := []evalArm{{Label: "A", Settings: retrievalText(s.cfg), p: s.pipeline}}
	for i, c := range armCfgs {
		p, err := s.pipeline.WithSettings(retrievalSettings(c))
		if err != nil {
			return fmt.Errorf("--ab %q: %w", specs[i], err)
		}
		arms = append(arms, evalArm{Label: string(rune('B' + i)), Settings: specs[i], p: p})
	}
	rep, err := evaluate(ctx, s, arms, *k)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.writeText(m.Stdout)
	return nil
}

// retrievalText is the configured retrieval.* settings on one line.
func retrievalText(cfg config.Config) string {
	var parts []string
	for line := range strings.Lines(cfg.String()) {
		if kv, ok := strings.CutPrefix(strings.TrimSpace(line), "retrieval."); ok {
			parts = append(parts, strings.Replace(kv, ": ", "=", 1))
		}
	}
	return "configured: " + strings.Join(parts, " ")
}

// retrievalReport is the outcome of eval retrieval.
type retrievalReport struct {
	Questions string `json:"questions"` // the file
	Index     string `json:"index"`
	K         int    `json:"k"`
	// Uncovered counts the questions without acceptable notes, left out.
	Uncovered int           `json:"uncovered_skipped"`
	Arms      []armScore    `json:"arms"`
	Results   []questionRun `json:"results"`
}

// armScore is one arm's totals over the covered questions.
type armScore struct {
	evalArm
	RecallAtK float64 `json:"recall_at_k"`
	MRR       float64 `json:"mrr"`
	// InContext is the share of questions with an acceptable note in the
	// final context, final_top_k chunks as the arm sets it.
	InContext float64 `json:"in_context"`
	// ShortLists counts the questions whose ranked list held fewer than k
	// notes.
	ShortLists int `json:"short_lists"`
}

// questionRun is one covered question across the arms.
type questionRun struct {
	Line       int      `json:"line"`
	Question   string   `json:"question"`
	Acceptable []string `json:"acceptable"`
	// Ranks are per arm, 1-based; 0 where no acceptable note was ranked.
	Ranks     []int  `json:"ranks"`
	InContext []bool `json:"in_context"`
	notes     []int  // per arm, how many notes were ranked
}

func evaluate(ctx context.Context, s *evalSession, arms []evalArm, k int) (*retrievalReport, error) {
	rep := &retrievalReport{Questions: s.file, Index: s.cfg.Index.Path, K: k}
	for _, q := range s.questions {
		if !q.covered() {
			rep.Uncovered++
			continue
		}
		run := questionRun{Line: q.line, Question: q.text, Acceptable: q.acceptable}
		for _, a := range arms {
			rank, inContext, notes, err := rankAcceptable(ctx, a.p, q)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: arm %s: %w", s.file, q.line, a.Label, err)
			}
			run.Ranks = append(run.Ranks, rank)
			run.InContext = append(run.InContext, inContext)
			run.notes = append(run.notes, notes)
		}
		rep.Results = append(rep.Results, run)
	}
	if len(rep.Results) == 0 {
		return nil, fmt.Errorf("%s: no covered questions (every path list is empty)", s.file)
	}
	n := float64(len(rep.Results))
	for i, a := range arms {
		sc := armScore{evalArm: a}
		for _, r := range rep.Results {
			if rank := r.Ranks[i]; rank > 0 {
				sc.MRR += 1 / float64(rank) / n
				if rank <= k {
					sc.RecallAtK += 1 / n
				}
			}
			if r.InContext[i] {
				sc.InContext += 1 / n
			}
			if r.notes[i] < k {
				sc.ShortLists++
			}
		}
		rep.Arms = append(rep.Arms, sc)
	}
	return rep, nil
}

// rankAcceptable ranks the notes for q with p, over all notes (the eval
// measures retrieval, not the web; see rag.RankNotes). It returns the rank
// of the first acceptable note (0: not ranked), whether one was in the
// answer's context, and how many notes were ranked.
func rankAcceptable(ctx context.Context, p *rag.Pipeline, q evalQuestion) (rank int, inContext bool, notes int, err error) {
	ranked, answered, err := p.RankNotes(ctx, rag.Question{Text: q.text})
	if err != nil {
		return 0, false, 0, err
	}
	return firstAcceptable(ranked, q.acceptable), firstAcceptable(answered, q.acceptable) > 0, len(ranked), nil
}

// firstAcceptable is the 1-based position of the first acceptable path in
// notes, 0 when there is none.
func firstAcceptable(notes, acceptable []string) int {
	for i, n := range notes {
		if slices.Contains(acceptable, n) {
			return i + 1
		}
	}
	return 0
}

func (rep *retrievalReport) writeText(w io.Writer) {
	fmt.Fprintf(w, "eval retrieval: %d covered questions from %s (%d uncovered left out), index %s, all notes\n",
		len(rep.Results), rep.Questions, rep.Uncovered, rep.Index)
	fmt.Fprintf(w, "rank: of the first acceptable note among the distinct notes retrieval ranks, final_top_k raised to hold every direct hit\n")
	fmt.Fprintf(w, "      and the graph quota (see eval/RESULTS.md); \"-\": not ranked\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range rep.Arms {
		fmt.Fprintf(tw, "%s\t%s\n", a.Label, a.Settings)
	}
	tw.Flush()
	fmt.Fprintln(w)

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	head := []string{"line", "question"}
	for _, a := range rep.Arms {
		head = append(head, a.Label)
	}
	row(head...)
	for _, r := range rep.Results {
		cells := []string{strconv.Itoa(r.Line), clip(r.Question, 60)}
		for _, rank := range r.Ranks {
			cells = append(cells, rankText(rank))
		}
		row(cells...)
	}
	totals := []struct {
		name  string
		value func(armScore) string
	}{
		{fmt.Sprintf("recall@%d", rep.K), func(a armScore) string { return fmt.Sprintf("%.3f", a.RecallAtK) }},
		{"MRR", func(a armScore) string { return fmt.Sprintf("%.3f", a.MRR) }},
		{"in context (final_top_k chunks)", func(a armScore) string { return fmt.Sprintf("%.3f", a.InContext) }},
		{fmt.Sprintf("lists under %d notes", rep.K), func(a armScore) string { return strconv.Itoa(a.ShortLists) }},
	}
	for _, t := range totals {
		cells := []string{"", t.name}
		for _, a := range rep.Arms {
			cells = append(cells, t.value(a))
		}
		row(cells...)
	}
	tw.Flush()
}

func rankText(rank int) string {
	if rank == 0 {
		return "-"
	}
	return strconv.Itoa(rank)
}

// clip shortens s to n runes for a table cell.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func (m *Main) evalWebTrigger(ctx context.Context, args []string) error {
	fset, cfgPath := m.newFlagSet("eval web-trigger", "eval web-trigger --questions FILE.tsv")
	file := fset.String("questions", "", "questions file: question, TAB, acceptable note paths separated by | (none: the vault does not cover it)")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	s, err := m.openEval(ctx, *cfgPath, *file, func(cfg config.Config) error {
		if cfg.Web.ThinHits < 1 {
			return errors.New("web.thin_hits is 0: coverage is never thin, so there is no threshold to place")
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer s.store.Close()

	settings := s.pipeline.Settings()
	var covered, uncovered []thinStat
	for _, q := range s.questions {
		// The trigger runs only for requests that allow the web, which see
		// open notes only.
		r, err := s.pipeline.Retrieve(ctx, rag.Question{Text: q.text, AllowWeb: true})
		if err != nil {
			return fmt.Errorf("%s:%d: %w", s.file, q.line, err)
		}
		if r.FullTextOnly {
			return fmt.Errorf("%s:%d: no query vector (no embedder, or it failed: see stderr): the trigger reads vector distances", s.file, q.line)
		}
		st := thinStat{q: q, value: rag.ThinStatistic(r.Vector, settings.ThinHits)}
		if q.covered() {
			covered = append(covered, st)
		} else {
			uncovered = append(uncovered, st)
		}
	}
	writeWebTrigger(m.Stdout, settings, covered, uncovered)
	return nil
}

// thinStat is one question's value of the statistic the web trigger reads.
type thinStat struct {
	q     evalQuestion
	value float64
}

func values(stats []thinStat) []float64 {
	out := make([]float64, len(stats))
	for i, s := range stats {
		out[i] = s.value
	}
	slices.Sort(out)
	return out
}

// fiveNumbers are the minimum, quartiles and maximum of sorted values,
// interpolating between neighbours.
func fiveNumbers(sorted []float64) [5]float64 {
	var out [5]float64
	for i, p := range []float64{0, 0.25, 0.5, 0.75, 1} {
		h := p * float64(len(sorted)-1)
		lo := int(h)
		if frac := h - float64(lo); frac == 0 || sorted[lo] == sorted[lo+1] {
			out[i] = sorted[lo]
		} else {
			out[i] = sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
		}
	}
	return out
}

// split is a thin_distance and what it does to the questions: the web
// fires when the statistic is above it.
type split struct {
	threshold float64
	// gap is the width of the interval of equally good thresholds it is
	// the middle of; 0 at either end.
	gap float64
	// webOnCovered and quietOnUncovered are its mistakes.
	webOnCovered, quietOnUncovered int
}

func splitAt(threshold float64, covered, uncovered []float64) split {
	sp := split{threshold: threshold}
	for _, v := range covered {
		if v > threshold {
			sp.webOnCovered++
		}
	}
	for _, v := range uncovered {
		if v <= threshold {
			sp.quietOnUncovered++
		}
	}
	return sp
}

func (sp split) mistakes() int { return sp.webOnCovered + sp.quietOnUncovered }

// bestSplit is the thin_distance that sorts the most questions right: the
// midpoint between two neighbouring values, the widest such gap among the
// best, the lower on a tie. Below the smallest value every question is
// thin, at the largest none is (+Inf is always thin).
func bestSplit(covered, uncovered []float64) split {
	var finite []float64
	for _, v := range slices.Concat(covered, uncovered) {
		if !math.IsInf(v, 1) {
			finite = append(finite, v)
		}
	}
	slices.Sort(finite)
	finite = slices.Compact(finite)
	if len(finite) == 0 {
		return splitAt(0, covered, uncovered)
	}
	candidates := []split{splitAt(math.Nextafter(finite[0], math.Inf(-1)), covered, uncovered)}
	for i := 0; i+1 < len(finite); i++ {
		sp := splitAt((finite[i]+finite[i+1])/2, covered, uncovered)
		sp.gap = finite[i+1] - finite[i]
		candidates = append(candidates, sp)
	}
	candidates = append(candidates, splitAt(finite[len(finite)-1], covered, uncovered))
	return slices.MinFunc(candidates, func(a, b split) int {
		return cmp.Or(cmp.Compare(a.mistakes(), b.mistakes()), cmp.Compare(b.gap, a.gap), cmp.Compare(a.threshold, b.threshold))
	})
}

func writeWebTrigger(w io.Writer, s rag.Settings, covered, uncovered []thinStat) {
	fmt.Fprintf(w, "web trigger: coverage is thin, and the web fires, when fewer than web.thin_hits=%d vector hits lie within\n", s.ThinHits)
	fmt.Fprintf(w, "web.thin_distance of the question: when the %s smallest distance among the vector search's hits (open\n", ordinal(s.ThinHits))
	fmt.Fprintf(w, "notes only, as for a request that allows the web) is above it.\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tquestions\tmin\tq1\tmedian\tq3\tmax\t")
	cv, uv := values(covered), values(uncovered)
	for _, set := range []struct {
		name string
		vs   []float64
	}{{"covered", cv}, {"uncovered", uv}} {
		fmt.Fprintf(tw, "%s\t%d\t", set.name, len(set.vs))
		if len(set.vs) > 0 {
			for _, x := range fiveNumbers(set.vs) {
				fmt.Fprintf(tw, "%.3f\t", x)
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(cv) == 0 || len(uv) == 0 {
		fmt.Fprintln(w, "no threshold: the file needs both covered questions and uncovered ones (an empty path list)")
		return
	}

	total := len(cv) + len(uv)
	best := bestSplit(cv, uv)
	if maxCovered, minUncovered := cv[len(cv)-1], uv[0]; maxCovered >= minUncovered {
		fmt.Fprintf(w, "OVERLAP: covered questions reach %.3f and uncovered ones start at %.3f: no web.thin_distance separates them\n", maxCovered, minUncovered)
		fmt.Fprintf(w, "best split: web.thin_distance %.3f sorts %d of %d right (%.1f%%): the web fires on %d of %d covered questions\n",
			best.threshold, total-best.mistakes(), total, 100*float64(total-best.mistakes())/float64(total), best.webOnCovered, len(cv))
		fmt.Fprintf(w, "            and stays off for %d of %d uncovered ones\n", best.quietOnUncovered, len(uv))
	} else {
		fmt.Fprintf(w, "gap: covered questions reach %.3f, uncovered ones start at %.3f\n", maxCovered, minUncovered)
		where := "the midpoint of the gap"
		if math.IsInf(minUncovered, 1) {
			where = "every uncovered question has too few distances"
		}
		fmt.Fprintf(w, "threshold: web.thin_distance %.3f (%s) sorts all %d questions right\n", best.threshold, where, total)
	}
	now := splitAt(s.ThinDistance, cv, uv)
	fmt.Fprintf(w, "configured web.thin_distance %.3f: the web fires on %d of %d covered questions and stays off for %d of %d uncovered ones\n",
		s.ThinDistance, now.webOnCovered, len(cv), now.quietOnUncovered, len(uv))

	var wrong []string
	for _, st := range covered {
		if st.value > best.threshold {
			wrong = append(wrong, fmt.Sprintf("  line %d, covered, %.3f: %s", st.q.line, st.value, clip(st.q.text, 80)))
		}
	}
	for _, st := range uncovered {
		if st.value <= best.threshold {
			wrong = append(wrong, fmt.Sprintf("  line %d, uncovered, %.3f: %s", st.q.line, st.value, clip(st.q.text, 80)))
		}
	}
	if len(wrong) > 0 {
		fmt.Fprintf(w, "\nsorted wrong at %.3f:\n%s\n", best.threshold, strings.Join(wrong, "\n"))
	}
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}
