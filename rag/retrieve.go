package rag

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vaultask/vaultask/vault"
)

// Retrieval is what retrieval found for one question.
type Retrieval struct {
	Question string
	Query    string // what was searched: the question, or its standalone rewrite
	Scope    vault.Scope
	// Direct are the fused hits after the diversity cap, best first.
	Direct []Hit
	// Vector are the vector search's own hits, nearest first, and FTS the
	// full-text search's, best first: what the coverage judgement reads,
	// whatever the fusion kept of them.
	Vector []Hit
	FTS    []vault.Chunk
	// Hits are the final hits, best first; Context the same hits in
	// assembly order.
	Hits    []Hit
	Context []Hit
	// FullTextOnly is set when there was no query vector: no embedder, or
	// it failed.
	FullTextOnly bool
	// Coverage is how well the vault covers the question (see
	// Pipeline.judgeCoverage), and Features what it was judged by.
	Coverage Coverage
	Features map[string]float64
	// Thin is set when the coverage is not OutcomeCovered, Silent when it
	// is OutcomeSilent.
	Thin, Silent bool
	// Members counts the expanded candidates that are members of a topic
	// note among the hits: what graph_member_slots could give places to.
	Members int
	// Maps counts the expanded candidates linked from a map of content
	// among the hits: what graph_map_slots could give places to.
	Maps int
	// Rerank is what the rerank did and cost; nil without a reranker.
	Rerank *RerankReport
	Trace  Trace
}

// Notes are the distinct note paths of the final hits, best first.
func (r *Retrieval) Notes() []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range r.Hits {
		if !seen[h.Chunk.Path] {
			seen[h.Chunk.Path] = true
			out = append(out, h.Chunk.Path)
		}
	}
	return out
}

// Retrieve runs retrieval for q: the standalone query, vector and
// full-text search fused, the diversity cap, graph expansion, rerank, the
// graph quota and assembly. Every read is restricted to q.Scope(). A
// question over the limits is a *LimitError.
func (p *Pipeline) Retrieve(ctx context.Context, q Question) (*Retrieval, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, errors.New("empty question")
	}
	if err := p.Admit(q); err != nil {
		return nil, err
	}
	s := p.opts.Settings.with(q.K)
	scope := q.Scope()
	r := &Retrieval{Question: q.Text, Scope: scope, Trace: Trace{Question: q.Text, Scope: scope.String()}}
	r.Query = p.standalone(ctx, q, &r.Trace)
	r.Trace.Query = r.Query

	vec, err := p.direct(ctx, r, s)
	if err != nil {
		return nil, err
	}
	if err := p.judgeCoverage(ctx, r, s, vec.Space); err != nil {
		return nil, err
	}
	candidates, topicOf, err := p.graph(ctx, r, vec, s)
	if err != nil {
		return nil, err
	}
	candidates, r.Rerank = p.rerank(ctx, r.Query, candidates, s.RerankTopK, &r.Trace)
	r.Hits = r.quota(candidates, s)
	r.Context = assemble(r.Hits, topicOf)
	r.Trace.stage("assemble", r.Context, "graph order: a note's chunks together in document order, topic notes before their members")
	return r, nil
}

// graph adds to r's direct hits their one-hop neighbourhood when graph
// expansion is on, counting the topic members and the notes linked from a
// map of content among them; topicOf are the topic notes of the members.
func (p *Pipeline) graph(ctx context.Context, r *Retrieval, vec vault.QueryVector, s Settings) (candidates []Hit, topicOf map[string][]string, err error) {
	if !s.GraphEnabled {
		r.Trace.stage("expand", nil, "graph_enabled is false")
		return r.Direct, nil, nil
	}
	expanded, nb, err := p.expand(ctx, r.Direct, vec, s, r.Scope)
	if err != nil {
		return nil, nil, err
	}
	direct, promoted := promoteMembers(r.Direct, expanded, nb, s.GraphDiscount, s.GraphMemberSlots)
	var changes []string
	for _, path := range promoted {
		changes = append(changes, path+" found directly, scored as the topic member it is")
	}
	r.Trace.stage("expand", expanded, fmt.Sprintf("one hop from the notes of the top %d hits, %d neighbours each at most, scored %.2f × the reaching hit", s.FinalTopK, s.GraphMaxSiblings, s.GraphDiscount), changes...)
	r.Members += len(promoted)
	for _, h := range expanded {
		if h.Graph.Relation == vault.RelationMember {
			r.Members++
		}
		if h.Graph.Map {
			r.Maps++
		}
	}
	return mergeByScore(direct, expanded), topicsOf(nb), nil
}

// quota picks the final hits from the candidates: final_top_k, of which the
// expanded ones take at most their slots unless direct hits are too few.
func (r *Retrieval) quota(candidates []Hit, s Settings) []Hit {
	final, held := selectFinal(candidates, s.FinalTopK, graphSlots{Graph: s.GraphMaxSlots, Members: s.GraphMemberSlots, Maps: s.GraphMapSlots})
	changes := changeList("quota held back", held)
	if n := countGraph(final); n > s.GraphMaxSlots+s.GraphMemberSlots+s.GraphMapSlots {
		changes = append(changes, fmt.Sprintf("too few direct hits: %d expanded chunks fill the answer beyond graph_max_slots %d, graph_member_slots %d and graph_map_slots %d",
			n, s.GraphMaxSlots, s.GraphMemberSlots, s.GraphMapSlots))
	}
	r.Trace.stage("quota", final, fmt.Sprintf("final %d, at most %d expanded, %d topic members and %d linked from a map of content",
		s.FinalTopK, s.GraphMaxSlots, s.GraphMemberSlots, s.GraphMapSlots), changes...)
	return final
}

// RankNotes is retrieval's whole ranking of notes for q, for measuring
// retrieval (recall@k, MRR) rather than answering it. inContext are the
// distinct notes of Retrieve(q)'s final hits, best first: what the answer
// sees, final_top_k chunks. ranked are the distinct notes, best first, of
// the final hits of a second Retrieve whose final_top_k is raised to the
// number of direct hits plus the graph slots, so that the list is the
// pipeline's ranking rather than what fits in final_top_k chunks: every
// direct hit has a place (and graph expansion starts from all of their
// notes), expanded hits still take at most their slots' places, and the
// thin-answer exception (expanded hits filling places that direct hits
// leave empty) fires exactly where it fires for the answer, because it
// needs fewer direct hits than that raised final_top_k can hold. When
// final_top_k already holds them all, there is no second run and ranked is
// inContext.
func (p *Pipeline) RankNotes(ctx context.Context, q Question) (ranked, inContext []string, err error) {
	r, err := p.Retrieve(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	inContext = r.Notes()
	s := p.opts.Settings.with(q.K)
	all := len(r.Direct) + s.GraphMaxSlots + min(s.GraphMemberSlots, r.Members) + min(s.GraphMapSlots, r.Maps)
	if all <= s.FinalTopK {
		return inContext, inContext, nil
	}
	q.K.FinalTopK = all
	if r, err = p.Retrieve(ctx, q); err != nil {
		return nil, nil, err
	}
	return r.Notes(), inContext, nil
}

func countGraph(hits []Hit) int {
	n := 0
	for _, h := range hits {
		if h.Graph != nil {
			n++
		}
	}
	return n
}
