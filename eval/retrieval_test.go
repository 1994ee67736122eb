package eval

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTally(t *testing.T) {
	t.Parallel()
	arms := []Arm{{Label: "A"}, {Label: "B"}}
	// Ranks per arm, whether in context, how many notes were ranked.
	runs := []QuestionRun{
		{Ranks: []int{1, 3}, InContext: []bool{true, false}, Notes: []int{5, 1}},
		{Ranks: []int{2, 0}, InContext: []bool{true, false}, Notes: []int{5, 5}},
		{Ranks: []int{4, 0}, InContext: []bool{false, false}, Notes: []int{5, 5}},
	}
	questions := []Question{{Acceptable: []string{"a"}}, {Acceptable: []string{"b"}}, {Acceptable: []string{"c"}}, {}, {}}
	got := tally(arms, 2, runs, questions)
	want := Tally{Covered: 3, Uncovered: 2, Arms: []Scores{
		{Label: "A", RecallAt1: 1.0 / 3, RecallAtK: 2.0 / 3, MRR: (1 + 0.5 + 0.25) / 3, InContext: 2.0 / 3, ShortLists: 0},
		{Label: "B", RecallAtK: 0, MRR: 1.0 / 3 / 3, InContext: 0, ShortLists: 1, VsA: &Paired{RRDown: 3, Lost: 2}},
	}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("tally (-want +got):\n%s", diff)
	}
	// No covered questions: nothing to measure, and no division by zero.
	empty := tally(arms, 2, nil, []Question{{}})
	for _, s := range empty.Arms {
		if math.IsNaN(s.MRR) || s.RecallAtK != 0 || s.InContext != 0 {
			t.Errorf("empty tally: %+v", s)
		}
	}
	if empty.Covered != 0 || empty.Uncovered != 1 {
		t.Errorf("empty tally counts %d covered, %d uncovered", empty.Covered, empty.Uncovered)
	}
}

// The paired counts go question by question: a rise on one and a fall on
// another cancel in the mean but not here.
func TestPaired(t *testing.T) {
	t.Parallel()
	runs := []QuestionRun{
		{Ranks: []int{3, 1}}, // up, found
		{Ranks: []int{1, 2}}, // down, still found
		{Ranks: []int{0, 9}}, // up, not found at k
		{Ranks: []int{2, 0}}, // down, lost
		{Ranks: []int{4, 4}}, // same
	}
	want := &Paired{RRUp: 2, RRDown: 2, Gained: 1, Lost: 1}
	if got := paired(runs, 1, 2); !cmp.Equal(got, want) {
		t.Errorf("paired = %+v, want %+v", got, want)
	}
}

func TestFirstAcceptable(t *testing.T) {
	t.Parallel()
	notes := []string{"x.md", "b.md", "a.md"}
	if got := firstAcceptable(notes, []string{"a.md", "b.md"}); got != 2 {
		t.Errorf("first acceptable at %d, want 2", got)
	}
	if got := firstAcceptable(notes, []string{"z.md"}); got != 0 {
		t.Errorf("none acceptable at %d, want 0", got)
	}
}
