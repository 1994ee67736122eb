package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Summary describes a set of values: repeated runs of one measurement, or
// the samples of one latency distribution.
type Summary struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// summarize sorts a copy of xs and reads its quantiles (nearest rank; the
// median of an even count is the mean of the middle two).
func summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	q := func(p float64) float64 { return s[rank(p, len(s))] }
	mid := (s[(len(s)-1)/2] + s[len(s)/2]) / 2
	return Summary{N: len(s), Min: s[0], Median: mid, P95: q(0.95), P99: q(0.99), Max: s[len(s)-1]}
}

// rank is the index of quantile p among n sorted values, by nearest rank.
func rank(p float64, n int) int {
	i := int(math.Ceil(p*float64(n))) - 1
	return min(max(i, 0), n-1)
}

// quantileText prints quantile p (v) of n samples, marked when n is too
// small for it to be anything but the max: below 100 samples for p99,
// below 20 for p95.
func quantileText(v, p float64, n int) string {
	if n > 0 && rank(p, n) == n-1 {
		return fmt.Sprintf("%s (= max, n<%.0f)", num(v), math.Round(1/(1-p)))
	}
	return num(v)
}

// Row is one figure of the report: its values (repeated runs, or the
// samples of a distribution; Summary.N says how many, and a figure that
// takes minutes may have one) and, when it has one, the baseline measured
// in the same run and their ratio.
type Row struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Samples is set for a latency distribution (p95 and p99 are shown);
	// otherwise the values are repeated runs (min, median, max).
	Samples bool      `json:"samples,omitempty"`
	Values  []float64 `json:"values"`
	Summary Summary   `json:"summary"`
	// Baseline names what the figure is compared with; BaselineValues are
	// its values from the same run; Ratio is median over baseline median.
	Baseline        string    `json:"baseline,omitempty"`
	BaselineValues  []float64 `json:"baseline_values,omitempty"`
	BaselineSummary *Summary  `json:"baseline_summary,omitempty"`
	Ratio           float64   `json:"ratio,omitempty"`
	// RatioP99 is the p99s' ratio, for a distribution.
	RatioP99 float64 `json:"ratio_p99,omitempty"`
	// Target is the target for this figure and Met whether the
	// median (p99 or p95 where the target says so) meets it.
	Target string `json:"target,omitempty"`
	Met    *bool  `json:"met,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Section is one numbered part of the issue.
type Section struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Command string   `json:"command"`
	Notes   []string `json:"notes,omitempty"`
	Rows    []*Row   `json:"rows"`
	Charts  []string `json:"charts,omitempty"`
	// Skipped says why the section has no figures.
	Skipped string  `json:"skipped,omitempty"`
	Seconds float64 `json:"seconds"`
	// Started, Commit and Machine say when, on what code and where the
	// section ran: a run with -only keeps the other sections of the report
	// it writes over, so they may differ from the report's.
	Started time.Time `json:"started"`
	Commit  string    `json:"commit"`
	Machine Machine   `json:"machine"`
}

// add appends a figure of repeated runs.
func (s *Section) add(name, unit string, values []float64) *Row {
	r := &Row{Name: name, Unit: unit, Values: values, Summary: summarize(values)}
	s.Rows = append(s.Rows, r)
	return r
}

// dist appends a latency distribution.
func (s *Section) dist(name, unit string, samples []float64) *Row {
	r := s.add(name, unit, samples)
	r.Samples = true
	return r
}

// against sets the row's baseline; the ratio is of the medians.
func (r *Row) against(name string, values []float64) *Row {
	b := summarize(values)
	r.Baseline, r.BaselineValues, r.BaselineSummary = name, values, &b
	if b.Median != 0 {
		r.Ratio = r.Summary.Median / b.Median
	}
	if r.Samples && b.P99 != 0 {
		r.RatioP99 = r.Summary.P99 / b.P99
	}
	return r
}

// target records the target and whether the figure meets it: at
// most limit (or at least, with atLeast) on the value read by which.
func (r *Row) target(text string, which func(Summary) float64, limit float64, atLeast bool) *Row {
	v := which(r.Summary)
	met := v <= limit
	if atLeast {
		met = v >= limit
	}
	r.Target, r.Met = text, &met
	return r
}

func p99(s Summary) float64    { return s.P99 }
func median(s Summary) float64 { return s.Median }
func maxOf(s Summary) float64  { return s.Max }

// Machine is what the figures were measured on.
type Machine struct {
	CPU      string  `json:"cpu"`
	Cores    int     `json:"cores"`
	MemoryGB float64 `json:"memory_gb"`
	Kernel   string  `json:"kernel"`
	Go       string  `json:"go"`
}

// String is the machine in one line, as the report prints it.
func (m Machine) String() string {
	return fmt.Sprintf("%s, %d cores, %.1f GiB memory, Linux %s, %s", m.CPU, m.Cores, m.MemoryGB, m.Kernel, m.Go)
}

// Report is everything one run measured, and the sections it kept from
// earlier runs (a run with -only). Its commit, start, time and machine are
// the latest run's; each section has its own.
type Report struct {
	Size     string     `json:"size"`
	Commit   string     `json:"commit"`
	Dirty    bool       `json:"dirty"`
	Started  time.Time  `json:"started"`
	Seconds  float64    `json:"seconds"`
	Machine  Machine    `json:"machine"`
	Command  string     `json:"command"`
	Sections []*Section `json:"sections"`
}

// mergeInto keeps the sections of the report already in dir that this run
// did not run (a run with -only), so that sections run separately make one
// report. A report it cannot read, or of another size, is replaced whole,
// with a warning: this run's figures are never lost to it.
func (rep *Report) mergeInto(dir string, log *slog.Logger) {
	path := filepath.Join(dir, "bench", "results.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var old Report
	if err == nil {
		err = json.Unmarshal(b, &old)
	}
	if err != nil {
		log.Warn("the earlier report cannot be read: it is replaced by this run's sections alone", keyFile, path, keyErr, err)
		return
	}
	if old.Size != rep.Size {
		log.Warn("the earlier report is of another size: it is replaced by this run's sections alone", keyFile, path, keySize, old.Size)
		return
	}
	ran := map[string]bool{}
	for _, s := range rep.Sections {
		ran[s.ID] = true
	}
	for _, s := range old.Sections {
		if !ran[s.ID] {
			rep.Sections = append(rep.Sections, s)
		}
	}
	slices.SortFunc(rep.Sections, func(a, b *Section) int { return strings.Compare(a.ID, b.ID) })
}

// WriteFiles writes BENCHMARKS.md into dir and results.json beside the
// charts in dir/bench.
func (rep *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "bench"), 0o755); err != nil {
		return err
	}
	j, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench", "results.json"), append(j, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "BENCHMARKS.md"))
	if err != nil {
		return err
	}
	rep.writeMarkdown(f)
	return f.Close()
}

func (rep *Report) writeMarkdown(w io.Writer) {
	fmt.Fprintf(w, "# vaultask benchmarks\n\n")
	fmt.Fprintf(w, "Written by `%s` (size %s) — numbers, not tests: nothing here fails CI. ", rep.Command, rep.Size)
	fmt.Fprintf(w, "This machine is shared and noisy, so a figure is measured several times where that is cheap, and shown as the min / median / max of those runs (or the percentiles of a latency distribution) and, where it has a baseline, the ratio of the medians against that baseline **measured in the same run**: absolute times move between runs, ratios much less. Not every figure is repeated: where one run takes minutes (the generated vault, the larger sizes of the scale curve, the indexes with vectors) or the figure is one count or size of a run (answers/s, errors, file and binary sizes), **n** says how many values it has — n = 1 is a single measurement with no spread (no min or max shown), and with n = 2 the median is the mean of the two.\n\n")
	dirty := ""
	if rep.Dirty {
		dirty = " (with uncommitted changes)"
	}
	fmt.Fprintf(w, "| latest run (wrote this file) | |\n|---|---|\n| commit | `%s`%s |\n| started | %s |\n| took | %s |\n| machine | %s |\n",
		rep.Commit, dirty, rep.Started.UTC().Format(time.RFC3339), (time.Duration(rep.Seconds) * time.Second).String(), rep.Machine)
	var kept []string
	for _, s := range rep.Sections {
		if s.Started.Before(rep.Started) {
			kept = append(kept, s.ID)
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(w, "| sections kept from earlier runs | %s |\n", strings.Join(kept, ", "))
	}
	fmt.Fprintf(w, "\nEach section says when and on what commit it ran (a run with `-only` keeps the other sections of the report it writes over), and on what machine where that is not the latest run's.\n\n")
	fmt.Fprintf(w, "Columns: **n** runs (or samples); min, median, max (p50, p95, p99 for a distribution, by nearest rank: below 20 samples the p95, below 100 the p99 is the max, and is marked so); the baseline's median and the ratio figure ÷ baseline (medians, < 1 is faster or smaller than the baseline for times and sizes, > 1 is more for rates). Targets are the issue's, read on the column the target names.\n\n")
	rep.writeTargets(w)
	for _, s := range rep.Sections {
		fmt.Fprintf(w, "## %s. %s\n\n", s.ID, s.Title)
		if s.Skipped != "" {
			fmt.Fprintf(w, "Skipped: %s\n\n", s.Skipped)
			continue
		}
		where := ""
		if s.Machine != rep.Machine {
			where = "; on another machine: " + s.Machine.String()
			if s.Machine == (Machine{}) {
				where = "; its machine was not recorded"
			}
		}
		fmt.Fprintf(w, "Reproduce: `%s` (this section took %.0f s; ran %s on `%s`%s)\n\n", s.Command, s.Seconds, s.Started.UTC().Format(time.RFC3339), s.Commit, where)
		for _, n := range s.Notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
		if len(s.Notes) > 0 {
			fmt.Fprintln(w)
		}
		writeRows(w, s.Rows)
		for _, c := range s.Charts {
			fmt.Fprintf(w, "![%s](bench/%s)\n\n", strings.TrimSuffix(c, ".png"), c)
		}
	}
}

// writeTargets lists every figure that has a target, where it landed.
func (rep *Report) writeTargets(w io.Writer) {
	fmt.Fprintln(w, "## Targets")
	fmt.Fprintln(w)
	rep.writeTargetRows(w)
}

// writeTargetRows is writeTargets' table, and a blank line after it: the
// README's too (READMETargets).
func (rep *Report) writeTargetRows(w io.Writer) {
	fmt.Fprintln(w, "| section | figure | target | n | median / p50 | p99 | baseline median | ratio | |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---|")
	for _, s := range rep.Sections {
		for _, r := range s.Rows {
			if r.Met == nil {
				continue
			}
			p99s, bmed, ratio := "", "", ""
			if r.Samples {
				p99s = quantileText(r.Summary.P99, 0.99, r.Summary.N)
			}
			if r.BaselineSummary != nil {
				bmed = num(r.BaselineSummary.Median) + " (" + r.Baseline + ")"
				ratio = ratioText(r)
			}
			verdict := "**missed**"
			if *r.Met {
				verdict = "met"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s %s | %s | %s | %s | %s |\n", s.ID, r.Name, r.Target, r.Summary.N, num(r.Summary.Median), r.Unit, p99s, bmed, ratio, verdict)
		}
	}
	fmt.Fprintln(w)
}

func writeRows(w io.Writer, rows []*Row) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "| figure | unit | n | min | median / p50 | p95 | p99 | max | baseline | baseline median | ratio | target |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
	for _, r := range rows {
		s := r.Summary
		mins, maxs := num(s.Min), num(s.Max)
		if s.N == 1 {
			mins, maxs = "", "" // one value: no spread
		}
		p95s, p99s := "", ""
		if r.Samples {
			p95s, p99s = quantileText(s.P95, 0.95, s.N), quantileText(s.P99, 0.99, s.N)
		}
		base, bmed, ratio := "", "", ""
		if r.BaselineSummary != nil {
			base, bmed = r.Baseline, num(r.BaselineSummary.Median)
			ratio = ratioText(r)
		}
		tgt := r.Target
		if r.Met != nil {
			if *r.Met {
				tgt += " — **met**"
			} else {
				tgt += " — **missed**"
			}
		}
		name := r.Name
		if r.Note != "" {
			name += " (" + r.Note + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			name, r.Unit, s.N, mins, num(s.Median), p95s, p99s, maxs, base, bmed, ratio, tgt)
	}
	fmt.Fprintln(w)
}

// ratioText is the median ratio, and the p99 one for a distribution.
func ratioText(r *Row) string {
	switch {
	case r.Ratio == 0:
		return ""
	case r.RatioP99 != 0 && (r.Summary.N < 100 || r.BaselineSummary.N < 100):
		return fmt.Sprintf("%.3g× (p99 %.3g×; a p99 of n<100 is the max)", r.Ratio, r.RatioP99)
	case r.RatioP99 != 0:
		return fmt.Sprintf("%.3g× (p99 %.3g×)", r.Ratio, r.RatioP99)
	default:
		return fmt.Sprintf("%.3g×", r.Ratio)
	}
}

// num prints a value with three significant digits, without an exponent
// for the magnitudes a benchmark reports.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}
