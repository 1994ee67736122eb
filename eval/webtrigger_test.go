package eval

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/config"
)

func TestWriteWebTriggerGap(t *testing.T) {
	t.Parallel()
	stat := func(line int, covered bool, v float64) ThinStat {
		q := Question{Line: line, Text: "q"}
		if covered {
			q.Acceptable = []string{"a.md"}
		}
		return ThinStat{Question: q, Value: v}
	}
	var out bytes.Buffer
	rep := &WebTriggerReport{ThinHits: 2, ThinDistance: 0.5,
		Covered:   []ThinStat{stat(1, true, 0.3), stat(2, true, 0.4), stat(3, true, 0.5)},
		Uncovered: []ThinStat{stat(4, false, 0.8), stat(5, false, 0.7)}}
	rep.WriteText(&out)
	for _, want := range []string{"2nd smallest", "covered          3  0.300  0.350   0.400  0.450  0.500",
		"uncovered          2  0.700  0.725   0.750  0.775  0.800", "gap: covered questions reach 0.500, uncovered ones start at 0.700",
		"threshold: web.thin_distance 0.600 (the midpoint of the gap) sorts all 5 questions right",
		"configured web.thin_distance 0.500: the web fires on 0 of 3 covered questions and stays off for 0 of 2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "OVERLAP") || strings.Contains(out.String(), "sorted wrong") {
		t.Errorf("no overlap here:\n%s", out.String())
	}
}

func TestBestSplit(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	for _, tc := range []struct {
		name               string
		covered, uncovered []float64
		threshold          float64
		mistakes           int
	}{
		{"gap", []float64{0.25, 0.375}, []float64{0.625, 0.75}, 0.5, 0},
		// Two equally good intervals of equal width: the lower.
		{"overlap", []float64{0.25, 0.75}, []float64{0.5, 1}, 0.375, 1},
		// The wider of two equally good intervals.
		{"widest", []float64{0.125, 0.5}, []float64{0.25, 1}, 0.75, 1},
		// +Inf (too few distances) is always thin.
		{"inf", []float64{0.25, inf}, []float64{0.5, inf}, 0.375, 1},
		// Below every value: everything is thin.
		{"below", []float64{inf}, []float64{0.25}, math.Nextafter(0.25, 0), 1},
	} {
		got := bestSplit(tc.covered, tc.uncovered)
		if got.threshold != tc.threshold || got.mistakes() != tc.mistakes {
			t.Errorf("%s: threshold %v with %d mistakes, want %v with %d", tc.name, got.threshold, got.mistakes(), tc.threshold, tc.mistakes)
		}
	}
}

func TestFiveNumbers(t *testing.T) {
	t.Parallel()
	if got := fiveNumbers([]float64{1, 2, 3, 4, 5}); got != [5]float64{1, 2, 3, 4, 5} {
		t.Errorf("1..5: %v", got)
	}
	if got := fiveNumbers([]float64{0.7}); got != [5]float64{0.7, 0.7, 0.7, 0.7, 0.7} {
		t.Errorf("one value: %v", got)
	}
	inf := math.Inf(1)
	if got := fiveNumbers([]float64{0, 1, inf, inf, inf}); got != [5]float64{0, 1, inf, inf, inf} {
		t.Errorf("with +Inf: %v", got)
	}
}

func TestCheckWebTrigger(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	if err := CheckWebTrigger(cfg); err != nil {
		t.Errorf("default thin_hits: %v", err)
	}
	cfg.Web.ThinHits = 0
	if err := CheckWebTrigger(cfg); err == nil || !strings.Contains(err.Error(), "web.thin_hits is 0") {
		t.Errorf("thin_hits 0: %v", err)
	}
}
