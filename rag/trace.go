package rag

import (
	"fmt"
	"io"
	"strings"
)

// Trace records each stage of one request: its candidates, and what the
// stage changed (what the diversity cap dropped, the quota held back, the
// reranker moved, the citation check removed).
type Trace struct {
	Question string  `json:"question"`
	Query    string  `json:"query"`
	Scope    string  `json:"scope"` // "open" or "all"
	Stages   []Stage `json:"stages"`
}

// Stage is one step of the pipeline as the trace shows it.
type Stage struct {
	Name    string    `json:"name"`
	Note    string    `json:"note,omitempty"`
	Changes []string  `json:"changes,omitempty"`
	Hits    []HitView `json:"hits,omitempty"`
}

// Reach describes how an expanded hit was reached ("sibling of A via T"),
// or "" for a direct hit.
func (h Hit) Reach() string {
	if h.Graph == nil {
		return ""
	}
	s := fmt.Sprintf("%s of %s", h.Graph.Relation, h.Graph.From)
	if h.Graph.Via != "" {
		s += " via " + h.Graph.Via
	}
	return s
}

// Provenance names the arms that found h: "vector+fts", "graph".
func (h Hit) Provenance() string { return joinSources(h.Sources) }

func (t *Trace) stage(name string, hits []Hit, note string, changes ...string) {
	t.Stages = append(t.Stages, Stage{Name: name, Note: note, Changes: changes, Hits: views(hits)})
}

// changeList describes hits one per line with a verb: "dropped a.md › B".
func changeList(verb string, hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s %s", verb, hitLabel(h))
	}
	return out
}

func hitLabel(h Hit) string {
	if h.Chunk.HeadingPath == "" {
		return h.Chunk.Path
	}
	return h.Chunk.Path + " › " + h.Chunk.HeadingPath
}

// WriteText writes the trace for a person: each stage, what it changed and
// up to maxHits of its candidates.
func (t *Trace) WriteText(w io.Writer, maxHits int) {
	fmt.Fprintf(w, "trace: question %q, query %q, scope %s\n", t.Question, t.Query, t.Scope)
	for _, s := range t.Stages {
		fmt.Fprintf(w, "\n[%s] %d candidates", s.Name, len(s.Hits))
		if s.Note != "" {
			fmt.Fprintf(w, " — %s", s.Note)
		}
		fmt.Fprintln(w)
		for _, c := range s.Changes {
			fmt.Fprintf(w, "  * %s\n", c)
		}
		for i, h := range s.Hits {
			if i == maxHits {
				fmt.Fprintf(w, "  … %d more\n", len(s.Hits)-maxHits)
				break
			}
			dist := "-"
			if h.Distance != nil {
				dist = fmt.Sprintf("%.3f", *h.Distance)
			}
			label := h.Path
			if h.Section != "" {
				label += " › " + h.Section
			}
			if h.Reach != "" {
				label += " (" + h.Reach + ")"
			}
			fmt.Fprintf(w, "  %2d %.4f d=%s %-10s %-8s %s\n", i+1, h.Score, dist, joinSources(h.Sources), h.Sensitivity, label)
		}
	}
}

func joinSources(s []Source) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = string(x)
	}
	return strings.Join(parts, "+")
}
