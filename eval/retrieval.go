package eval

import (
	"context"
	"fmt"
	"slices"

	"github.com/vaultask/vaultask/rag"
)

// RetrievalReport is the outcome of eval retrieval: every arm scored on
// every file, on each of its groups, and on all files together.
type RetrievalReport struct {
	Index string `json:"index"`
	K     int    `json:"k"`
	Arms  []Arm  `json:"arms"`
	// Total is over the covered questions of every file.
	Total Tally        `json:"total"`
	Files []FileReport `json:"files"`
}

// FileReport is one questions file scored.
type FileReport struct {
	Questions string `json:"questions"` // the file's path
	Tally
	// Groups are in the order they first appear in the file; none when the
	// file has no "# group:" lines.
	Groups  []GroupReport `json:"groups,omitempty"`
	Results []QuestionRun `json:"results"`
}

// GroupReport is one group of a file scored.
type GroupReport struct {
	Group string `json:"group"`
	Tally
}

// Tally is a set of questions scored, arm by arm.
type Tally struct {
	Covered int `json:"covered"`
	// Uncovered counts the questions without acceptable notes, left out.
	Uncovered int `json:"uncovered_skipped"`
	// Arms are in the report's arm order.
	Arms []Scores `json:"arms"`
}

// Scores are one arm's measures over the covered questions of a tally;
// all 0 when it has none.
type Scores struct {
	Label string `json:"label"`
	// RecallAt1 is the share of questions whose first ranked note is
	// acceptable.
	RecallAt1 float64 `json:"recall_at_1"`
	// RecallAtK is the share of questions with an acceptable note among the
	// first k ranked notes.
	RecallAtK float64 `json:"recall_at_k"`
	// MRR is the mean of 1/rank of the first acceptable note (0 when none
	// is ranked).
	MRR float64 `json:"mrr"`
	// InContext is the share of questions with an acceptable note in the
	// final context, final_top_k chunks as the arm sets it.
	InContext float64 `json:"in_context"`
	// ShortLists counts the questions whose ranked list held fewer than k
	// notes.
	ShortLists int `json:"short_lists"`
	// VsA compares the arm with arm A question by question; nil for A.
	VsA *Paired `json:"vs_a,omitempty"`
}

// Paired counts the questions on which an arm did better or worse than arm
// A. A mean moves by a question or two either way by chance; counts that
// go one way are what make a difference real.
type Paired struct {
	// RRUp and RRDown count the questions whose reciprocal rank rose or
	// fell.
	RRUp   int `json:"rr_up"`
	RRDown int `json:"rr_down"`
	// Gained and Lost count the questions that entered or left the first k
	// notes.
	Gained int `json:"found_gained"`
	Lost   int `json:"found_lost"`
}

// QuestionRun is one covered question across the arms.
type QuestionRun struct {
	Line       int      `json:"line"`
	Group      string   `json:"group,omitempty"`
	Question   string   `json:"question"`
	Acceptable []string `json:"acceptable"`
	// Ranks are per arm, 1-based; 0 where no acceptable note was ranked.
	Ranks     []int  `json:"ranks"`
	InContext []bool `json:"in_context"`
	// Notes are per arm, how many notes were ranked (see short_lists).
	Notes []int `json:"notes"`
}

// Retrieval scores every arm on the covered questions of files, over all
// notes (the eval measures retrieval, not the web), with k (at least 1)
// for recall@k. indexPath names the index the arms read, for the report. Every
// file needs a covered question.
func Retrieval(ctx context.Context, indexPath string, files []*QuestionFile, arms []Arm, k int) (*RetrievalReport, error) {
	rep := &RetrievalReport{Index: indexPath, K: k, Arms: arms}
	var runs []QuestionRun
	var questions []Question
	for _, f := range files {
		fr := FileReport{Questions: f.Path}
		for _, q := range f.Questions {
			if !q.Covered() {
				continue
			}
			run, err := rank(ctx, arms, q)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", f.Path, q.Line, err)
			}
			fr.Results = append(fr.Results, run)
		}
		if len(fr.Results) == 0 {
			return nil, fmt.Errorf("%s: no covered questions (every path list is empty)", f.Path)
		}
		fr.Tally = tally(arms, k, fr.Results, f.Questions)
		for _, g := range f.Groups() {
			inGroup := filter(f.Questions, func(q Question) bool { return q.Group == g })
			ranked := filter(fr.Results, func(r QuestionRun) bool { return r.Group == g })
			fr.Groups = append(fr.Groups, GroupReport{Group: g, Tally: tally(arms, k, ranked, inGroup)})
		}
		rep.Files = append(rep.Files, fr)
		runs = append(runs, fr.Results...)
		questions = append(questions, f.Questions...)
	}
	rep.Total = tally(arms, k, runs, questions)
	return rep, nil
}

// rank runs q on every arm.
func rank(ctx context.Context, arms []Arm, q Question) (QuestionRun, error) {
	run := QuestionRun{Line: q.Line, Group: q.Group, Question: q.Text, Acceptable: q.Acceptable}
	for _, a := range arms {
		ranked, inContext, err := a.Pipeline.RankNotes(ctx, rag.Question{Text: q.Text})
		if err != nil {
			return run, fmt.Errorf("arm %s: %w", a.Label, err)
		}
		run.Ranks = append(run.Ranks, firstAcceptable(ranked, q.Acceptable))
		run.InContext = append(run.InContext, firstAcceptable(inContext, q.Acceptable) > 0)
		run.Notes = append(run.Notes, len(ranked))
	}
	return run, nil
}

// tally scores runs, the covered ones of questions.
func tally(arms []Arm, k int, runs []QuestionRun, questions []Question) Tally {
	uncovered := len(filter(questions, func(q Question) bool { return !q.Covered() }))
	return Tally{Covered: len(runs), Uncovered: uncovered, Arms: scores(arms, k, runs)}
}

func scores(arms []Arm, k int, runs []QuestionRun) []Scores {
	out := make([]Scores, len(arms))
	n := float64(len(runs))
	for i, a := range arms {
		sc := Scores{Label: a.Label}
		for _, r := range runs {
			if rank := r.Ranks[i]; rank > 0 {
				sc.MRR += 1 / float64(rank) / n
				if rank == 1 {
					sc.RecallAt1 += 1 / n
				}
				if rank <= k {
					sc.RecallAtK += 1 / n
				}
			}
			if r.InContext[i] {
				sc.InContext += 1 / n
			}
			if r.Notes[i] < k {
				sc.ShortLists++
			}
		}
		if i > 0 {
			sc.VsA = paired(runs, i, k)
		}
		out[i] = sc
	}
	return out
}

// paired compares arm i with arm A (0) on each of runs.
func paired(runs []QuestionRun, i, k int) *Paired {
	rr := func(rank int) float64 {
		if rank == 0 {
			return 0
		}
		return 1 / float64(rank)
	}
	found := func(rank int) bool { return rank > 0 && rank <= k }
	p := &Paired{}
	for _, r := range runs {
		a, b := r.Ranks[0], r.Ranks[i]
		switch {
		case rr(b) > rr(a):
			p.RRUp++
		case rr(b) < rr(a):
			p.RRDown++
		}
		switch {
		case found(b) && !found(a):
			p.Gained++
		case found(a) && !found(b):
			p.Lost++
		}
	}
	return p
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

func filter[T any](xs []T, keep func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}
