package eval

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/rag"
)

// The text report counts each kind's outcomes, says how many it sorted
// right (a covered question judged covered, an uncovered one thin or
// silent) and lists the questions it sorted wrong.
func TestWriteWebTrigger(t *testing.T) {
	t.Parallel()
	set := WebTriggerSet{Path: "q.tsv", Covered: KindCounts{Kind: "covered questions", Covers: true}, Uncovered: KindCounts{Kind: "uncovered questions"}}
	judged := []struct {
		q Question
		c rag.Coverage
	}{
		{Question{Line: 3, Text: "how do I bake bread?", Group: "direct", Acceptable: []string{"a.md"}}, rag.Coverage{Outcome: rag.OutcomeCovered, Score: 0.9}},
		{Question{Line: 4, Text: "when to sow beans?", Group: "direct", Acceptable: []string{"b.md"}}, rag.Coverage{Outcome: rag.OutcomeThin, Score: 0.2}},
		{Question{Line: 6, Text: "capital of Peru?", Group: "offtopic"}, rag.Coverage{Outcome: rag.OutcomeSilent, Score: 0.01}},
		{Question{Line: 7, Text: "how far is the moon?", Group: "offtopic"}, rag.Coverage{Outcome: rag.OutcomeCovered, Grey: true, Score: 0.5}},
	}
	for _, j := range judged {
		kind := kindOf(j.q)
		i := len(set.Kinds)
		for k, kc := range set.Kinds {
			if kc.Kind == kind {
				i = k
			}
		}
		if i == len(set.Kinds) {
			set.Kinds = append(set.Kinds, KindCounts{Kind: kind, Covers: j.q.Covered()})
		}
		set.Kinds[i].count(j.c)
		if j.q.Covered() {
			set.Covered.count(j.c)
		} else {
			set.Uncovered.count(j.c)
		}
		set.Questions = append(set.Questions, JudgedQuestion{Line: j.q.Line, Kind: kind, Covers: j.q.Covered(), Question: j.q.Text, Coverage: j.c})
	}
	var out bytes.Buffer
	(&WebTriggerReport{Scope: "all", Files: []WebTriggerSet{set}}).WriteText(&out)
	for _, want := range []string{
		"direct    answers  2        1             0     1       0         0    50%",
		"offtopic   lacks it  2        1             1     0       1         0    50%",
		"covered questions    answers  2        1             0     1       0         0    50%",
		"line 4, direct, judged thin (0.20): when to sow beans?",
		"line 7, offtopic, judged covered (0.50): how far is the moon?",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "line 3,") || strings.Contains(out.String(), "line 6,") {
		t.Errorf("a question sorted right is listed as wrong:\n%s", out.String())
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q    Question
		want string
	}{
		{Question{Group: "nearmiss"}, "nearmiss"},
		{Question{Acceptable: []string{"a.md"}}, "covered"},
		{Question{}, "uncovered"},
	} {
		if got := kindOf(tc.q); got != tc.want {
			t.Errorf("kindOf(%+v) = %q, want %q", tc.q, got, tc.want)
		}
	}
}
