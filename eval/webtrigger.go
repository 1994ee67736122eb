package eval

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/vaultask/vaultask/internal/clip"
	"github.com/vaultask/vaultask/rag"
)

// WebTriggerReport is the outcome of eval web-trigger: how the coverage
// judgement sorted each question of each file, against what the file says
// the vault covers, counted by file, kind (the question's group) and band.
type WebTriggerReport struct {
	// Scope is the scope the questions were retrieved under: "all", or
	// "open" as for a request that allows the web.
	Scope string `json:"scope"`
	// Verdicts is set when the generation model gave its verdict on each
	// question's passages, which then decides its outcome.
	Verdicts bool            `json:"verdicts"`
	Files    []WebTriggerSet `json:"files"`
}

// WebTriggerSet is one question file's judgements.
type WebTriggerSet struct {
	Path      string           `json:"path"`
	Kinds     []KindCounts     `json:"kinds"`
	Covered   KindCounts       `json:"covered"`   // every covered question
	Uncovered KindCounts       `json:"uncovered"` // every uncovered question
	Questions []JudgedQuestion `json:"questions"`
}

// KindCounts count the outcomes of a kind of question.
type KindCounts struct {
	Kind     string `json:"kind"`
	Covers   bool   `json:"vault_covers"`
	N        int    `json:"n"`
	Covered  int    `json:"covered"`
	Grey     int    `json:"grey"` // judged covered, but in the grey band
	Thin     int    `json:"thin"`
	Silent   int    `json:"silent"`
	Indexing int    `json:"indexing"`
}

// Right is how many the judgement sorted right: a covered question judged
// covered, an uncovered one judged thin or silent.
func (k KindCounts) Right() int {
	if k.Covers {
		return k.Covered
	}
	return k.Thin + k.Silent
}

// JudgedQuestion is one question and its judgement.
type JudgedQuestion struct {
	Line     int          `json:"line"`
	Kind     string       `json:"kind"`
	Covers   bool         `json:"vault_covers"`
	Question string       `json:"question"`
	Coverage rag.Coverage `json:"coverage"`
	// Verdict is the generation model's, with --verdict; Coverage is then
	// what it says, as the answer would.
	Verdict *rag.Verdict `json:"verdict,omitempty"`
}

// kindOf is a question's kind: its group, or "covered" and "uncovered"
// for one in no group.
func kindOf(q Question) string {
	switch {
	case q.Group != "":
		return q.Group
	case q.Covered():
		return "covered"
	}
	return "uncovered"
}

// WebTrigger judges every question of files with p, under the whole vault
// or, with allowWeb, as a request that allows the web (open notes only);
// with verdicts, p's generation model reads each question's passages and
// its verdict decides, as in an answer (rag.Pipeline.Judge).
func WebTrigger(ctx context.Context, p *rag.Pipeline, files []*QuestionFile, allowWeb, verdicts bool) (*WebTriggerReport, error) {
	rep := &WebTriggerReport{Scope: rag.Question{AllowWeb: allowWeb}.Scope().String(), Verdicts: verdicts}
	for _, f := range files {
		set := WebTriggerSet{Path: f.Path, Covered: KindCounts{Kind: "covered questions", Covers: true}, Uncovered: KindCounts{Kind: "uncovered questions"}}
		for _, q := range f.Questions {
			jq, err := judge(ctx, p, q, allowWeb, verdicts)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", f.Path, q.Line, err)
			}
			set.Questions = append(set.Questions, jq)
			i := slices.IndexFunc(set.Kinds, func(k KindCounts) bool { return k.Kind == jq.Kind && k.Covers == jq.Covers })
			if i < 0 {
				set.Kinds = append(set.Kinds, KindCounts{Kind: jq.Kind, Covers: jq.Covers})
				i = len(set.Kinds) - 1
			}
			set.Kinds[i].count(jq.Coverage)
			if jq.Covers {
				set.Covered.count(jq.Coverage)
			} else {
				set.Uncovered.count(jq.Coverage)
			}
		}
		rep.Files = append(rep.Files, set)
	}
	return rep, nil
}

// judge is q's judgement, and with verdicts the model's.
func judge(ctx context.Context, p *rag.Pipeline, q Question, allowWeb, verdicts bool) (JudgedQuestion, error) {
	jq := JudgedQuestion{Line: q.Line, Kind: kindOf(q), Covers: q.Covered(), Question: q.Text}
	rq := rag.Question{Text: q.Text, AllowWeb: allowWeb}
	if !verdicts {
		r, err := p.Retrieve(ctx, rq)
		if err == nil {
			jq.Coverage = r.Coverage
		}
		return jq, err
	}
	r, v, err := p.Judge(ctx, rq)
	if err != nil {
		return jq, err
	}
	jq.Coverage, jq.Verdict = r.Coverage, v
	if v != nil {
		jq.Coverage.Outcome, jq.Coverage.Grey = v.Outcome(), false
	}
	return jq, nil
}

func (k *KindCounts) count(c rag.Coverage) {
	k.N++
	switch c.Outcome {
	case rag.OutcomeCovered:
		k.Covered++
		if c.Grey {
			k.Grey++
		}
	case rag.OutcomeThin:
		k.Thin++
	case rag.OutcomeSilent:
		k.Silent++
	case rag.OutcomeIndexing:
		k.Indexing++
	}
}

// WriteText writes the report for a person: per file, a table of the
// outcomes of each kind of question, the totals for covered and uncovered
// questions, and the questions it sorted wrong.
func (rep *WebTriggerReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "coverage judged for each question as for a request that sees %s notes: covered, thin (the web, when\n", map[string]string{"all": "all", "open": "open"}[rep.Scope])
	fmt.Fprintf(w, "allowed, supplements the vault) or silent; \"grey\" counts the covered ones near the line to thin, which a\n")
	fmt.Fprintf(w, "generation model reads and decides.\n")
	if rep.Verdicts {
		fmt.Fprintf(w, "Here the generation model read every question's passages, and its verdict decided.\n")
	}
	for _, set := range rep.Files {
		fmt.Fprintf(w, "\n%s\n", set.Path)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "kind\tthe vault\tn\tcovered\tof them grey\tthin\tsilent\tindexing\tright\t")
		for _, k := range append(slices.Clone(set.Kinds), set.Covered, set.Uncovered) {
			if k.N == 0 {
				continue
			}
			covers := "lacks it"
			if k.Covers {
				covers = "answers"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f%%\t\n", k.Kind, covers, k.N, k.Covered, k.Grey, k.Thin, k.Silent, k.Indexing, percent(k.Right(), k.N))
		}
		tw.Flush()
		var wrong []string
		for _, q := range set.Questions {
			judgedCovered := q.Coverage.Outcome == rag.OutcomeCovered
			if judgedCovered != q.Covers {
				wrong = append(wrong, fmt.Sprintf("  line %d, %s, judged %s (%.2f): %s", q.Line, q.Kind, q.Coverage.Outcome, q.Coverage.Score, clip.Text(q.Question, 80, "")))
			}
		}
		if len(wrong) > 0 {
			fmt.Fprintf(w, "sorted wrong:\n")
			for _, line := range wrong {
				fmt.Fprintln(w, line)
			}
		}
	}
}

func percent(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
