package eval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The development question files parse, with the groups and sizes
// QUESTIONS.md gives them, and only the uncovered group is uncovered.
func TestDevelopmentQuestionFiles(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]map[string]int{
		"help-questions.tsv": {"direct": 56, "uncovered": 6, "far": 31},
		"hub-questions.tsv":  {"direct": 36, "moc": 18, "uncovered": 12},
	} {
		f, err := ReadQuestions(file)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, q := range f.Questions {
			got[q.Group]++
			if q.Covered() == (q.Group == "uncovered") {
				t.Errorf("%s:%d: group %s, covered %v", file, q.Line, q.Group, q.Covered())
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: questions per group (-want +got):\n%s", file, diff)
		}
	}
}
