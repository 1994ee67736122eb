package rag

import (
	"github.com/vaultask/vaultask/vault"
)

// Turn is one earlier message of the conversation a question belongs to.
type Turn struct {
	Role string `json:"role"` // "user" or "assistant"
	Text string `json:"text"`
}

// Question is one request to the pipeline.
type Question struct {
	Text    string
	History []Turn // earlier turns, oldest first
	// AllowWeb lets the answer fall back to the web. It is the sensitivity
	// decision: such a request sees open notes only, in every read.
	AllowWeb bool
	// K overrides the pipeline's sizes for this request; zero keeps the
	// pipeline's own.
	K Overrides
	// MaxTokens bounds the generated answer's tokens (a client's
	// max_tokens); 0 leaves the generation model's own bound.
	MaxTokens int
}

// Overrides are per-request sizes; a zero field keeps the pipeline's value.
type Overrides struct {
	VectorTopK int `json:"vector_top_k,omitempty"`
	FTSTopK    int `json:"fts_top_k,omitempty"`
	FusionTopK int `json:"fusion_top_k,omitempty"`
	FinalTopK  int `json:"final_top_k,omitempty"`
}

// Scope is what every read for q may see, decided before retrieval starts:
// a request that may use the web sees open notes only.
func (q Question) Scope() vault.Scope { return vault.ScopeFor(q.AllowWeb) }

func (s Settings) with(o Overrides) Settings {
	for _, f := range []struct {
		dst *int
		v   int
	}{
		{&s.VectorTopK, o.VectorTopK}, {&s.FTSTopK, o.FTSTopK}, {&s.FusionTopK, o.FusionTopK}, {&s.FinalTopK, o.FinalTopK},
	} {
		if f.v > 0 {
			*f.dst = f.v
		}
	}
	return s
}

// historyTurns is how many earlier turns the rewrite sees.
const historyTurns = 6

// recentTurns are the last historyTurns turns the request may show a model.
func recentTurns(q Question) []Turn {
	var turns []Turn
	for _, t := range q.History {
		if t.Role == "user" || !q.AllowWeb {
			turns = append(turns, t)
		}
	}
	if len(turns) > historyTurns {
		turns = turns[len(turns)-historyTurns:]
	}
	return turns
}
