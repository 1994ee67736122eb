package eval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Fitted on examples drawn from a known logistic model, the weights come
// back close to the model's: the fit is a real maximum-likelihood fit.
func TestFitLogisticRecoversWeights(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	trueW, trueB := []float64{2, -1.5}, 0.5
	var xs [][]float64
	var ys []bool
	for range 20000 {
		x := []float64{rng.NormFloat64(), rng.NormFloat64()}
		z := trueB + trueW[0]*x[0] + trueW[1]*x[1]
		xs = append(xs, x)
		ys = append(ys, rng.Float64() < 1/(1+math.Exp(-z)))
	}
	l, err := FitLogistic(xs, ys, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Standardised weights: the features' scale is about 1, their mean 0.
	for i, w := range trueW {
		if got := l.Weights[i] / l.Scale[i]; math.Abs(got-w) > 0.1 {
			t.Errorf("weight %d = %.3f, want about %.3f", i, got, w)
		}
	}
	if math.Abs(l.Bias-trueB) > 0.1 {
		t.Errorf("bias = %.3f, want about %.3f", l.Bias, trueB)
	}
	if p := l.Probability([]float64{0, 0}); math.Abs(p-1/(1+math.Exp(-trueB))) > 0.03 {
		t.Errorf("probability at 0 = %.3f", p)
	}
}

func TestFitLogisticRefuses(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		xs [][]float64
		ys []bool
	}{
		"no examples":   {nil, nil},
		"one label":     {[][]float64{{1}, {2}}, []bool{true, true}},
		"ragged":        {[][]float64{{1}, {2, 3}}, []bool{true, false}},
		"label missing": {[][]float64{{1}, {2}}, []bool{true}},
	} {
		if _, err := FitLogistic(tc.xs, tc.ys, nil, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestAUC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pos, neg []float64
		want     float64
	}{
		{[]float64{0.9, 0.8}, []float64{0.1, 0.2}, 1},
		{[]float64{0.1}, []float64{0.9}, 0},
		{[]float64{0.5, 0.5}, []float64{0.5}, 0.5},
		{[]float64{0.9, 0.3}, []float64{0.5}, 0.5},
	} {
		if got := AUC(tc.pos, tc.neg); got != tc.want {
			t.Errorf("AUC(%v, %v) = %v, want %v", tc.pos, tc.neg, got, tc.want)
		}
	}
	if !math.IsNaN(AUC(nil, []float64{1})) {
		t.Error("AUC without positives is not NaN")
	}
}

// The thin line keeps at most the share asked of every corpus's covered
// questions below it: the corpus whose covered questions score lowest
// decides.
func TestCoveredLine(t *testing.T) {
	t.Parallel()
	var rows []LabelledRow
	var p []float64
	for i := range 100 {
		rows = append(rows, LabelledRow{FeatureRow: FeatureRow{Covered: true}, Corpus: "big"})
		p = append(p, 0.5+float64(i)/200)
	}
	for i := range 10 {
		rows = append(rows, LabelledRow{FeatureRow: FeatureRow{Covered: true}, Corpus: "small"})
		p = append(p, 0.2+float64(i)/20)
	}
	line := coveredLine(rows, p, 0.1)
	for _, corpus := range []string{"big", "small"} {
		below, n := 0, 0
		for i, r := range rows {
			if r.Corpus == corpus {
				n++
				if p[i] < line {
					below++
				}
			}
		}
		if float64(below) > 0.1*float64(n) {
			t.Errorf("%s: %d of %d below the line %.3f", corpus, below, n, line)
		}
	}
	if line < 0.2 || line > 0.3 {
		t.Errorf("line %.3f: the small corpus's tenth lowest is 0.2, its second 0.25", line)
	}
}

// FitCoverage places its lines in order on cross-validated probabilities,
// and a feature that separates the corpora's covered questions from the
// rest gets the weight.
func TestFitCoverage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []LabelledRow
	for _, corpus := range []string{"a", "b"} {
		for i := range 120 {
			covered := i%2 == 0
			d1 := 0.5 + 0.1*rng.NormFloat64()
			if covered {
				d1 = 0.25 + 0.05*rng.NormFloat64()
			}
			rows = append(rows, LabelledRow{Corpus: corpus, FeatureRow: FeatureRow{Covered: covered, Group: map[bool]string{true: "direct", false: "offtopic"}[covered],
				Features: map[string]float64{"d1": d1, "noise": rng.Float64()}}})
		}
	}
	res, err := FitCoverage(rows, CoverageFitOptions{Features: []string{"d1", "noise"}, Lambda: 1, Folds: 5, Seed: 1, ThinCovered: 0.04, SilentCovered: 0, GreyCovered: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if !(0 <= res.Silent && res.Silent <= res.Thin && res.Thin <= res.Grey && res.Grey <= 1) {
		t.Fatalf("lines out of order: silent %v, thin %v, grey %v", res.Silent, res.Thin, res.Grey)
	}
	if math.Abs(res.Model.Weights[0]) < 4*math.Abs(res.Model.Weights[1]) || res.Model.Weights[0] >= 0 {
		t.Errorf("weights %v: d1 should weigh most, negatively", res.Model.Weights)
	}
	for c, auc := range CorpusAUC(rows, res.OutOfFold) {
		if auc < 0.95 {
			t.Errorf("corpus %s: cross-validated AUC %.3f", c, auc)
		}
	}
	var out strings.Builder
	CoverageTable(&out, rows, res.OutOfFold, res.Thin, res.Silent, res.Grey)
	if !strings.Contains(out.String(), "offtopic") || !strings.Contains(out.String(), "all uncovered") {
		t.Errorf("table:\n%s", out.String())
	}
}

// FuzzReadFeatureRows: any input reads as rows or an error naming the
// line, never a panic.
func FuzzReadFeatureRows(f *testing.F) {
	f.Add(`{"file":"q.tsv","line":3,"group":"direct","covered":true,"question":"q","features":{"d1":0.3}}` + "\n\n")
	f.Add("{\n")
	f.Fuzz(func(t *testing.T, data string) {
		rows, err := ReadFeatureRows(strings.NewReader(data), "c")
		if err == nil {
			for _, r := range rows {
				if r.Corpus != "c" {
					t.Fatalf("corpus %q", r.Corpus)
				}
			}
		} else if !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "token too long") {
			t.Fatalf("error without its line: %v", err)
		}
	})
}
