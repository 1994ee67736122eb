// Command coverage-fit fits a coverage model (rag.CoverageModel, shipped
// as llm/coverage/NAME.json) on the features `vaultask eval web-trigger
// --features` wrote, one file or more per corpus:
//
//	go run ./devtools/cmd/coverage-fit -name bge-small-en-v1.5 -features d1,absent,share_top3 \
//	  -o llm/coverage/bge-small-en-v1.5.json help=help.jsonl hub=hub.jsonl demo=demo.jsonl \
//	  -heldout help=help-heldout.jsonl
//
// It prints, per corpus and kind, how the cross-validated probabilities
// sort the questions at the lines it placed, the AUC per corpus, and the
// same for the held-out files under the final model, which never saw them.
// scripts/fit-coverage.sh runs it for every built-in model. It is not part
// of the vaultask binary.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/vaultask/vaultask/eval"
	"github.com/vaultask/vaultask/llm"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "coverage-fit:", err)
		os.Exit(1)
	}
}

// corpusFiles collects CORPUS=FILE arguments.
type corpusFiles []struct{ corpus, path string }

func (c *corpusFiles) String() string { return fmt.Sprint(*c) }

func (c *corpusFiles) Set(v string) error {
	corpus, path, ok := strings.Cut(v, "=")
	if !ok || corpus == "" || path == "" {
		return fmt.Errorf("%q: want CORPUS=FILE.jsonl", v)
	}
	*c = append(*c, struct{ corpus, path string }{corpus, path})
	return nil
}

func (c corpusFiles) read() ([]eval.LabelledRow, error) {
	var rows []eval.LabelledRow
	for _, f := range c {
		fh, err := os.Open(f.path)
		if err != nil {
			return nil, err
		}
		rs, err := eval.ReadFeatureRows(fh, f.corpus)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.path, err)
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("coverage-fit", flag.ContinueOnError)
	name := fs.String("name", "", "the fit's name (the embedding model's, or fallback, full-text)")
	features := fs.String("features", "", "comma-separated features to weigh (see rag's coverageFeatures)")
	out := fs.String("o", "", "write the fit here as JSON (llm/coverage/NAME.json); default: print only")
	lambda := fs.Float64("lambda", 1, "L2 penalty on the standardised weights")
	folds := fs.Int("folds", 5, "cross-validation folds the lines are placed on")
	thin := fs.Float64("thin-covered", 0.04, "share of each corpus's covered questions the thin line may put below it")
	silent := fs.Float64("silent-covered", 0.005, "share the silent line may put below it")
	grey := fs.Float64("grey-covered", 0.2, "share below the grey line (covered, but a reader should judge)")
	var heldout corpusFiles
	fs.Var(&heldout, "heldout", "CORPUS=FILE.jsonl of questions kept aside: measured under the final model only; repeat for more")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var fit corpusFiles
	for _, a := range fs.Args() {
		if err := fit.Set(a); err != nil {
			return err
		}
	}
	if *name == "" || *features == "" || len(fit) == 0 {
		return errors.New("-name, -features and at least one CORPUS=FILE.jsonl are required")
	}
	rows, err := fit.read()
	if err != nil {
		return err
	}
	o := eval.CoverageFitOptions{Features: strings.Split(*features, ","), Lambda: *lambda, Folds: *folds, Seed: 1,
		ThinCovered: *thin, SilentCovered: *silent, GreyCovered: *grey}
	res, err := eval.FitCoverage(rows, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d questions; lines on cross-validated probabilities: thin %.3f, silent %.3f, grey %.3f\n\n", *name, len(rows), res.Thin, res.Silent, res.Grey)
	eval.CoverageTable(stdout, rows, res.OutOfFold, res.Thin, res.Silent, res.Grey)
	summary := []string{aucLine("fitted sets, cross-validated", eval.CorpusAUC(rows, res.OutOfFold))}
	fmt.Fprintf(stdout, "\n%s\n", summary[0])
	if len(heldout) > 0 {
		held, err := heldout.read()
		if err != nil {
			return err
		}
		p := make([]float64, len(held))
		for i, r := range held {
			x := make([]float64, len(o.Features))
			for j, f := range o.Features {
				x[j] = r.Features[f]
			}
			p[i] = res.Model.Probability(x)
		}
		fmt.Fprintf(stdout, "\nheld out, %d questions, under the final model:\n\n", len(held))
		eval.CoverageTable(stdout, held, p, res.Thin, res.Silent, res.Grey)
		summary = append(summary, aucLine("held out", eval.CorpusAUC(held, p)))
		fmt.Fprintf(stdout, "\n%s\n", summary[1])
	}
	count := map[string]int{}
	for _, r := range rows {
		count[r.Corpus]++
	}
	var sizes []string
	for _, c := range slices.Sorted(maps.Keys(count)) {
		sizes = append(sizes, fmt.Sprintf("%s %d", c, count[c]))
	}
	fitted := llm.CoverageFit{Name: *name, Features: o.Features, Mean: res.Model.Mean, Scale: res.Model.Scale, Weights: res.Model.Weights,
		Bias: res.Model.Bias, Thin: res.Thin, Silent: res.Silent, Grey: res.Grey,
		Fitted: fmt.Sprintf("%d questions (%s), lambda %g, lines on %d-fold cross-validated probabilities (covered below thin ≤ %g, silent ≤ %g, grey ≤ %g per corpus); %s",
			len(rows), strings.Join(sizes, ", "), *lambda, *folds, *thin, *silent, *grey, strings.Join(summary, "; "))}
	data, err := json.MarshalIndent(fitted, "", "  ")
	if err != nil {
		return err
	}
	if *out == "" {
		return nil
	}
	return os.WriteFile(*out, append(data, '\n'), 0o644)
}

func aucLine(what string, auc map[string]float64) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(auc)) {
		parts = append(parts, fmt.Sprintf("%s %.3f", c, auc[c]))
	}
	return fmt.Sprintf("AUC %s: %s", what, strings.Join(parts, ", "))
}
