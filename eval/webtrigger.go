package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/rag"
)

// WebTriggerReport is the outcome of eval web-trigger: each question's
// value of the statistic the web trigger reads, covered and uncovered
// questions apart, to place web.thin_distance between them.
type WebTriggerReport struct {
	Questions string // the file's path
	// ThinHits and ThinDistance are the configured trigger.
	ThinHits     int
	ThinDistance float64
	// Covered and Uncovered are in file order.
	Covered, Uncovered []ThinStat
}

// ThinStat is one question's value of rag.ThinStatistic: +Inf when too few
// vector hits have a distance.
type ThinStat struct {
	Question Question
	Value    float64
}

// CheckWebTrigger refuses a configuration whose coverage is never thin, so
// that there is no threshold to place; it needs no index, so it runs first.
func CheckWebTrigger(cfg config.Config) error {
	if cfg.Web.ThinHits < 1 {
		return errors.New("web.thin_hits is 0: coverage is never thin, so there is no threshold to place")
	}
	return nil
}

// WebTrigger computes the statistic for every question of f with p, as the
// trigger does: for a request that allows the web, which sees open notes
// only.
func WebTrigger(ctx context.Context, p *rag.Pipeline, f *QuestionFile) (*WebTriggerReport, error) {
	s := p.Settings()
	rep := &WebTriggerReport{Questions: f.Path, ThinHits: s.ThinHits, ThinDistance: s.ThinDistance}
	for _, q := range f.Questions {
		r, err := p.Retrieve(ctx, rag.Question{Text: q.Text, AllowWeb: true})
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", f.Path, q.Line, err)
		}
		if r.FullTextOnly {
			return nil, fmt.Errorf("%s:%d: no query vector (no embedder, or it failed: see stderr): the trigger reads vector distances", f.Path, q.Line)
		}
		st := ThinStat{Question: q, Value: rag.ThinStatistic(r.Vector, s.ThinHits)}
		if q.Covered() {
			rep.Covered = append(rep.Covered, st)
		} else {
			rep.Uncovered = append(rep.Uncovered, st)
		}
	}
	return rep, nil
}

func values(stats []ThinStat) []float64 {
	out := make([]float64, len(stats))
	for i, s := range stats {
		out[i] = s.Value
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
