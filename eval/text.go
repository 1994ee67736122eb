package eval

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/vaultask/vaultask/internal/clip"
)

// noGroup names, in text, the questions above a file's first group line.
const noGroup = "(no group)"

// WriteText writes the report for a person: the arms, then for each file
// its questions' ranks per arm with the file's measures below them and its
// groups' measures, then, for more than one file, the measures over all.
func (rep *RetrievalReport) WriteText(w io.Writer) {
	from := rep.Files[0].Questions
	if len(rep.Files) > 1 {
		from = fmt.Sprintf("%d files", len(rep.Files))
	}
	fmt.Fprintf(w, "eval retrieval: %d covered questions from %s (%d uncovered left out), index %s, all notes\n",
		rep.Total.Covered, from, rep.Total.Uncovered, rep.Index)
	fmt.Fprintf(w, "rank: of the first acceptable note among the distinct notes retrieval ranks, final_top_k raised to hold every direct hit\n")
	fmt.Fprintf(w, "      and the graph quota (see reports/RETRIEVAL.md); \"-\": not ranked\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range rep.Arms {
		fmt.Fprintf(tw, "%s\t%s\n", a.Label, a.Settings)
	}
	tw.Flush()

	for _, f := range rep.Files {
		fmt.Fprintln(w)
		if len(rep.Files) > 1 {
			fmt.Fprintf(w, "%s: %d covered questions (%d uncovered left out)\n", f.Questions, f.Covered, f.Uncovered)
		}
		rep.writeFile(w, f)
	}
	if len(rep.Files) > 1 {
		fmt.Fprintf(w, "\nall %d files: %d covered questions (%d uncovered left out)\n", len(rep.Files), rep.Total.Covered, rep.Total.Uncovered)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		row(tw, []string{"measure"}, rep.labels()...)
		for _, m := range rep.measureRows(rep.Total) {
			row(tw, nil, m...)
		}
		tw.Flush()
	}
}

// writeFile writes one file's table: a row per question, with its group
// when the file has groups, its measures below, then its groups' measures.
func (rep *RetrievalReport) writeFile(w io.Writer, f FileReport) {
	grouped := len(f.Groups) > 0
	labels := rep.labels()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	lead := []string{"line"}
	if grouped {
		lead = append(lead, "group")
	}
	row(tw, lead, append([]string{"question"}, labels...)...)
	for _, r := range f.Results {
		lead := []string{strconv.Itoa(r.Line)}
		if grouped {
			lead = append(lead, groupName(r.Group))
		}
		cells := []string{clip.Text(r.Question, 60, "")}
		for _, rank := range r.Ranks {
			cells = append(cells, rankText(rank))
		}
		row(tw, lead, cells...)
	}
	blank := make([]string, len(lead))
	for _, m := range rep.measureRows(f.Tally) {
		row(tw, blank, m...)
	}
	tw.Flush()
	if !grouped {
		return
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row(tw, []string{"group", "covered", "uncovered", "measure"}, labels...)
	for _, g := range f.Groups {
		lead := []string{groupName(g.Group), strconv.Itoa(g.Covered), strconv.Itoa(g.Uncovered)}
		for _, m := range rep.measureRows(g.Tally) {
			row(tw, lead, m...)
			lead = []string{"", "", ""}
		}
	}
	tw.Flush()
}

func (rep *RetrievalReport) labels() []string {
	var out []string
	for _, a := range rep.Arms {
		out = append(out, a.Label)
	}
	return out
}

// measureRows are a tally's measure rows: the measure's name, then one
// cell per arm, "-" when the tally has no covered question to measure.
func (rep *RetrievalReport) measureRows(t Tally) [][]string {
	measures := []struct {
		name  string
		value func(Scores) string
	}{
		{"recall@1", func(s Scores) string { return fmt.Sprintf("%.3f", s.RecallAt1) }},
		{fmt.Sprintf("recall@%d", rep.K), func(s Scores) string { return fmt.Sprintf("%.3f", s.RecallAtK) }},
		{"MRR", func(s Scores) string { return fmt.Sprintf("%.3f", s.MRR) }},
		{"in context (final_top_k chunks)", func(s Scores) string { return fmt.Sprintf("%.3f", s.InContext) }},
		{fmt.Sprintf("lists under %d notes", rep.K), func(s Scores) string { return strconv.Itoa(s.ShortLists) }},
		{"vs A: RR up/down", func(s Scores) string {
			if s.VsA == nil {
				return "–"
			}
			return fmt.Sprintf("%d/%d", s.VsA.RRUp, s.VsA.RRDown)
		}},
		{fmt.Sprintf("vs A: found@%d +/−", rep.K), func(s Scores) string {
			if s.VsA == nil {
				return "–"
			}
			return fmt.Sprintf("+%d/−%d", s.VsA.Gained, s.VsA.Lost)
		}},
	}
	rows := make([][]string, len(measures))
	for i, m := range measures {
		rows[i] = []string{m.name}
		for _, s := range t.Arms {
			v := "-"
			if t.Covered > 0 {
				v = m.value(s)
			}
			rows[i] = append(rows[i], v)
		}
	}
	return rows
}

// row writes one tabwriter row of cells after lead, the cells before them.
func row(w io.Writer, lead []string, cells ...string) {
	fmt.Fprintln(w, strings.Join(slices.Concat(lead, cells), "\t"))
}

func groupName(g string) string {
	if g == "" {
		return noGroup
	}
	return g
}

func rankText(rank int) string {
	if rank == 0 {
		return "-"
	}
	return strconv.Itoa(rank)
}
