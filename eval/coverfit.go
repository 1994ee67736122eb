package eval

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
)

// LabelledRow is a question's features with the corpus it was asked of.
type LabelledRow struct {
	FeatureRow
	Corpus string
}

// ReadFeatureRows reads what eval web-trigger --features wrote, labelling
// every row with corpus.
func ReadFeatureRows(r io.Reader, corpus string) ([]LabelledRow, error) {
	var out []LabelledRow
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var row FeatureRow
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, LabelledRow{FeatureRow: row, Corpus: corpus})
	}
	return out, sc.Err()
}

// CoverageFitOptions set how FitCoverage fits and places its lines.
type CoverageFitOptions struct {
	Features []string
	// Lambda is the L2 penalty on the standardised weights.
	Lambda float64
	// Folds is the number of cross-validation folds the lines are placed
	// on; Seed shuffles them.
	Folds int
	Seed  uint64
	// ThinCovered is the share of each corpus's covered questions the thin
	// line may put below it (on their cross-validated probabilities),
	// SilentCovered the share the silent line may, GreyCovered the share
	// below the grey line.
	ThinCovered, SilentCovered, GreyCovered float64
}

// CoverageFitResult is a fitted coverage model and how it measured.
type CoverageFitResult struct {
	Model              Logistic
	Thin, Silent, Grey float64
	// OutOfFold are the rows' cross-validated probabilities, in order.
	OutOfFold []float64
}

// FitCoverage fits a logistic model of "the vault covers the question"
// over rows, every corpus and label weighing alike whatever their counts
// (so a small vault's questions count as much as a large one's), and
// places the lines on cross-validated probabilities: thin as high as keeps
// at most ThinCovered of every corpus's covered questions below it, silent
// and grey likewise.
func FitCoverage(rows []LabelledRow, o CoverageFitOptions) (CoverageFitResult, error) {
	if len(o.Features) == 0 {
		return CoverageFitResult{}, fmt.Errorf("fit: no features")
	}
	xs, ys, ws := design(rows, o.Features)
	model, err := FitLogistic(xs, ys, ws, o.Lambda)
	if err != nil {
		return CoverageFitResult{}, err
	}
	oof, err := outOfFold(rows, xs, ys, ws, o)
	if err != nil {
		return CoverageFitResult{}, err
	}
	res := CoverageFitResult{Model: model, OutOfFold: oof}
	res.Thin = coveredLine(rows, oof, o.ThinCovered)
	res.Silent = min(coveredLine(rows, oof, o.SilentCovered), res.Thin)
	res.Grey = max(coveredLine(rows, oof, o.GreyCovered), res.Thin)
	return res, nil
}

// design is rows as examples: features, labels and weights.
func design(rows []LabelledRow, features []string) (xs [][]float64, ys []bool, ws []float64) {
	cell := map[string]int{}
	for _, r := range rows {
		cell[fmt.Sprint(r.Corpus, r.Covered)]++
	}
	for _, r := range rows {
		x := make([]float64, len(features))
		for j, f := range features {
			x[j] = r.Features[f]
		}
		xs = append(xs, x)
		ys = append(ys, r.Covered)
		ws = append(ws, float64(len(rows))/float64(len(cell)*cell[fmt.Sprint(r.Corpus, r.Covered)]))
	}
	return xs, ys, ws
}

// outOfFold gives every row the probability a model fitted without its fold
// gives it; folds are stratified by corpus and kind.
func outOfFold(rows []LabelledRow, xs [][]float64, ys []bool, ws []float64, o CoverageFitOptions) ([]float64, error) {
	folds := max(o.Folds, 2)
	fold := make([]int, len(rows))
	strata := map[string][]int{}
	for i, r := range rows {
		k := r.Corpus + "/" + r.Group + "/" + fmt.Sprint(r.Covered)
		strata[k] = append(strata[k], i)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0))
	next := 0
	for _, k := range slices.Sorted(maps.Keys(strata)) {
		idx := strata[k]
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		for _, i := range idx {
			fold[i] = next % folds
			next++
		}
	}
	oof := make([]float64, len(rows))
	for f := range folds {
		var tx [][]float64
		var ty []bool
		var tw []float64
		for i := range rows {
			if fold[i] != f {
				tx, ty, tw = append(tx, xs[i]), append(ty, ys[i]), append(tw, ws[i])
			}
		}
		m, err := FitLogistic(tx, ty, tw, o.Lambda)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f, err)
		}
		for i := range rows {
			if fold[i] == f {
				oof[i] = m.Probability(xs[i])
			}
		}
	}
	return oof, nil
}

// coveredLine is the highest probability that puts at most share of every
// corpus's covered questions below it: the lowest of the corpora's
// share-quantiles, placed halfway between the last question it may put
// below and the next.
func coveredLine(rows []LabelledRow, p []float64, share float64) float64 {
	line := 1.0
	byCorpus := map[string][]float64{}
	for i, r := range rows {
		if r.Covered {
			byCorpus[r.Corpus] = append(byCorpus[r.Corpus], p[i])
		}
	}
	for _, ps := range byCorpus {
		slices.Sort(ps)
		below := int(math.Floor(share * float64(len(ps)))) // how many may fall below
		t := ps[0] / 2                                     // none may: halfway to the lowest
		if below > 0 {
			t = (ps[below-1] + ps[min(below, len(ps)-1)]) / 2
		}
		line = min(line, t)
	}
	return line
}

// CoverageTable counts, per corpus and kind, how the lines sort rows whose
// probabilities are p: covered (and of those grey), thin and silent.
func CoverageTable(w io.Writer, rows []LabelledRow, p []float64, thin, silent, grey float64) {
	type key struct{ corpus, kind string }
	counts := map[key]*KindCounts{}
	var keys []key
	add := func(k key, covers bool, prob float64) {
		c := counts[k]
		if c == nil {
			c = &KindCounts{Kind: k.kind, Covers: covers}
			counts[k] = c
			keys = append(keys, k)
		}
		c.N++
		switch {
		case prob < silent:
			c.Silent++
		case prob < thin:
			c.Thin++
		default:
			c.Covered++
			if prob < grey {
				c.Grey++
			}
		}
	}
	for i, r := range rows {
		kind := r.Group
		if r.Covered {
			kind = "covered"
		} else if kind == "" || kind == "uncovered" {
			kind = "uncovered (older set)"
		}
		add(key{r.Corpus, kind}, r.Covered, p[i])
		if !r.Covered {
			add(key{r.Corpus, "all uncovered"}, false, p[i])
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int { return cmp.Compare(a.corpus, b.corpus) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "corpus\tkind\tn\tcovered\tgrey\tthin\tsilent\tthin or silent\tsilent\t")
	for _, k := range keys {
		c := counts[k]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.0f%%\t%.0f%%\t\n", k.corpus, k.kind, c.N, c.Covered, c.Grey, c.Thin, c.Silent,
			percent(c.Thin+c.Silent, c.N), percent(c.Silent, c.N))
	}
	tw.Flush()
}

// CorpusAUC is the AUC of p for covered against uncovered rows of each
// corpus, in corpus order.
func CorpusAUC(rows []LabelledRow, p []float64) map[string]float64 {
	pos, neg := map[string][]float64{}, map[string][]float64{}
	for i, r := range rows {
		if r.Covered {
			pos[r.Corpus] = append(pos[r.Corpus], p[i])
		} else {
			neg[r.Corpus] = append(neg[r.Corpus], p[i])
		}
	}
	out := map[string]float64{}
	for c := range pos {
		out[c] = AUC(pos[c], neg[c])
	}
	return out
}
