package eval

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// uncoveredGroups are the groups of questions the vault does not answer:
// the older sets' "uncovered", and the three kinds of the coverage sets.
var uncoveredGroups = []string{"uncovered", "offtopic", "adjacent", "nearmiss"}

// The question files parse, with the groups and sizes QUESTIONS.md gives
// them, and exactly the uncovered groups are uncovered.
func TestQuestionFiles(t *testing.T) {
	t.Parallel()
	coverage := func(direct, offtopic, adjacent, nearmiss int) map[string]int {
		return map[string]int{"direct": direct, "offtopic": offtopic, "adjacent": adjacent, "nearmiss": nearmiss}
	}
	for file, want := range map[string]map[string]int{
		"help-questions.tsv":        {"direct": 56, "uncovered": 6, "far": 31},
		"hub-questions.tsv":         {"direct": 36, "moc": 18, "uncovered": 12},
		"demo-questions.tsv":        {"direct": 7, "moc": 1, "uncovered": 2},
		"coverage/help.tsv":         coverage(30, 13, 13, 17),
		"coverage/hub.tsv":          coverage(30, 13, 17, 20),
		"coverage/demo.tsv":         coverage(30, 10, 10, 13),
		"coverage/heldout/help.tsv": coverage(15, 7, 7, 8),
		"coverage/heldout/hub.tsv":  coverage(15, 7, 8, 10),
		"coverage/heldout/demo.tsv": coverage(15, 5, 5, 7),
		"keyword/help.tsv":          {"direct": 56, "far": 31},
		"keyword/hub.tsv":           {"direct": 36, "moc": 18},
		"keyword/demo.tsv":          {"direct": 55, "moc": 1},
	} {
		f, err := ReadQuestions(file)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, q := range f.Questions {
			got[q.Group]++
			if q.Covered() == slices.Contains(uncoveredGroups, q.Group) {
				t.Errorf("%s:%d: group %s, covered %v", file, q.Line, q.Group, q.Covered())
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: questions per group (-want +got):\n%s", file, diff)
		}
	}
}

// The held-out questions are none of the fitting ones: each question is
// in one file only.
func TestHeldOutQuestionsAreApart(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, file := range []string{"help-questions.tsv", "hub-questions.tsv", "demo-questions.tsv", "coverage/help.tsv", "coverage/hub.tsv",
		"coverage/demo.tsv", "coverage/heldout/help.tsv", "coverage/heldout/hub.tsv", "coverage/heldout/demo.tsv"} {
		f, err := ReadQuestions(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range f.Questions {
			if other, ok := seen[q.Text]; ok {
				t.Errorf("%q is in %s and %s", q.Text, other, file)
			}
			seen[q.Text] = file
		}
	}
}
