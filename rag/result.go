package rag

// Result is the shape in which one request's retrieval, and its answer when
// there is one, leaves the pipeline: what `vaultask ask --json` prints, its
// trace included, so the CLI keeps no copy of what a hit says. The HTTP and
// MCP surfaces answer in their protocols' own shapes (OpenAI's completions,
// MCP's tool results) instead.
type Result struct {
	Question     string `json:"question"`
	Query        string `json:"query"`
	Scope        string `json:"scope"` // "open" or "all"
	FullTextOnly bool   `json:"full_text_only"`
	// Coverage is how well the vault covers the question; Thin and Silent
	// say the same, for readers of the fields before it.
	Coverage Coverage  `json:"coverage"`
	Thin     bool      `json:"thin"`
	Silent   bool      `json:"silent"`
	Hits     []HitView `json:"hits"` // the final hits, best first; [] rather than null when there are none
	// Rerank is what the rerank did and cost, and why it was skipped
	// when it was; absent without a rerank model.
	Rerank *RerankReport `json:"rerank,omitempty"`
	Answer *Answer       `json:"answer,omitempty"`
	Trace  *Trace        `json:"trace,omitempty"`
}

// NewResult is the result of r, with a as its answer (nil: retrieval
// only), and with r's trace when withTrace.
func NewResult(r *Retrieval, a *Answer, withTrace bool) Result {
	res := Result{Question: r.Question, Query: r.Query, Scope: r.Scope.String(), FullTextOnly: r.FullTextOnly,
		Coverage: r.Coverage, Thin: r.Thin, Silent: r.Silent, Hits: views(r.Hits), Rerank: r.Rerank, Answer: a}
	if a != nil {
		res.Coverage, res.Silent = a.Coverage, a.Silent
	}
	if withTrace {
		res.Trace = &r.Trace
	}
	return res
}

// HitView is a hit as output shows it, in a result and in each stage of a
// trace alike.
type HitView struct {
	Path     string `json:"path"`
	Section  string `json:"section,omitempty"`
	Citation string `json:"citation"` // the wikilink that cites the hit's note
	// Sensitivity is "open" or "personal".
	Sensitivity string   `json:"sensitivity"`
	Sources     []Source `json:"sources"`
	Score       float64  `json:"score"`
	// Distance is set for a hit with a vector distance to the query, Rerank
	// for one the rerank model scored.
	Distance *float64 `json:"distance,omitempty"`
	Rerank   *float64 `json:"rerank,omitempty"`
	Reach    string   `json:"reach,omitempty"` // how an expanded hit was reached; see Reach
}

// view is h as output shows it.
func (h Hit) view() HitView {
	v := HitView{Path: h.Chunk.Path, Section: h.Chunk.HeadingPath, Citation: Link(h.Chunk.Path, h.Chunk.Title),
		Sensitivity: h.Chunk.Sensitivity, Sources: h.Sources, Score: h.Score, Reach: h.Reach()}
	if h.HasDistance {
		d := h.Distance
		v.Distance = &d
	}
	if h.Reranked {
		r := h.Rerank
		v.Rerank = &r
	}
	return v
}

func views(hits []Hit) []HitView {
	out := make([]HitView, len(hits))
	for i, h := range hits {
		out[i] = h.view()
	}
	return out
}
