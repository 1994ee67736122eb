package rag

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/vaultask/vaultask/vault"
)

// Searcher is the index as the pipeline reads it; *index.Store implements
// it. Every method takes the request's scope and applies it inside its
// query, before any k or limit.
type Searcher interface {
	// SearchVector, DistanceBounds and NearestChunks compare q with the
	// vectors of q's embedding space only, and refuse one the index does
	// not search.
	SearchVector(ctx context.Context, q vault.QueryVector, k int, scope vault.Scope) ([]vault.Chunk, error)
	SearchFTS(ctx context.Context, text string, k int, scope vault.Scope, w vault.FieldWeights) ([]vault.Chunk, error)
	Docs(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Doc, error)
	// Hops reads the notes one hop from each of docIDs, by doc id alone:
	// expansion reads only the notes it may keep.
	Hops(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Hop, error)
	// DistanceBounds bounds the distance of each note's chunk nearest q,
	// cheaply, for the notes it can: expansion reads exactly only those
	// that may be among the nearest it keeps (see expansionReads).
	DistanceBounds(ctx context.Context, docIDs []string, q vault.QueryVector, scope vault.Scope) (map[string]vault.DistanceBounds, error)
	// NearestChunks reads each note's chunk nearest q (its first without
	// a vector or without vectors), with the distances of those that have one:
	// what Expand takes of the notes it reaches.
	NearestChunks(ctx context.Context, docIDs []string, q vault.QueryVector, scope vault.Scope) ([]vault.Chunk, map[int64]float64, error)
	ResolveLinks(ctx context.Context, links []string, scope vault.Scope) (map[string]vault.Doc, error)
	TermCounter
	// ActiveSpace is the embedding space the index searches: a query
	// vector must be of it. It changes when an index re-embedded with a
	// new model switches to it.
	ActiveSpace() vault.EmbeddingSpace
}

// Embedder embeds a question in an embedding space, the one the index
// searches, and tags the vector with it (Embedders holds a model of each
// space there is one of); ErrNoSpaceEmbedder when it has no model of it.
type Embedder interface {
	EmbedQuery(ctx context.Context, space vault.EmbeddingSpace, text string) (vault.QueryVector, error)
}

// Options wire a Pipeline. Searcher is required; every other dependency is
// optional and its absence is a documented degradation.
type Options struct {
	Searcher Searcher
	// Embedder embeds queries; nil means full-text search only.
	Embedder Embedder
	// Generator answers and rewrites multi-turn questions; nil means
	// extractive answers and rewrites by concatenation.
	Generator ChatModel
	// Reranker re-scores candidates; nil means no rerank.
	Reranker *Reranker
	// Web searches the web. Set it only when web search is enabled: the
	// pipeline never searches without one, nor for a request without
	// AllowWeb.
	Web      WebSearcher
	Settings Settings
	// Limits bound a question's size; the zero value is the defaults.
	Limits Limits
	// IndexState says how complete the index is, for the coverage
	// judgement; nil means complete.
	IndexState func(ctx context.Context, scope vault.Scope) IndexState
	// ModelTimeout bounds a rewrite; default 20s. A rerank has its own
	// budget (RerankOptions), the answer the caller's context.
	ModelTimeout time.Duration
	Logger       *slog.Logger
}

// Pipeline answers questions: retrieve, expand, rerank, assemble, answer.
// It holds no per-request state and is safe for concurrent use.
type Pipeline struct {
	opts Options
	log  *slog.Logger
}

// New returns a pipeline; it checks that the settings can give an answer.
func New(opts Options) (*Pipeline, error) {
	if opts.Searcher == nil {
		return nil, errors.New("rag: no searcher")
	}
	if err := opts.Settings.validate(); err != nil {
		return nil, err
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.ModelTimeout <= 0 {
		opts.ModelTimeout = 20 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Pipeline{opts: opts, log: opts.Logger.With(logComponent, "rag")}, nil
}

// Settings are the pipeline's sizes.
func (p *Pipeline) Settings() Settings { return p.opts.Settings }

// WithSettings returns a pipeline like p with other sizes, for an A/B
// evaluation.
func (p *Pipeline) WithSettings(s Settings) (*Pipeline, error) {
	opts := p.opts
	opts.Settings = s
	return New(opts)
}

// WithReranker returns a pipeline like p that reranks with r (nil: no
// rerank), for an A/B evaluation of a rerank model.
func (p *Pipeline) WithReranker(r *Reranker) *Pipeline {
	out := *p
	out.opts.Reranker = r
	return &out
}

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
	r.Context = Assemble(r.Hits, topicOf)
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
	final, held := Select(candidates, s.FinalTopK, Slots{Graph: s.GraphMaxSlots, Members: s.GraphMemberSlots, Maps: s.GraphMapSlots})
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

// standalone is the query to search: the question itself, or with history
// a standalone rewrite by the generation model (concatenated recent user
// turns without a model or when it fails).
func (p *Pipeline) standalone(ctx context.Context, q Question, tr *Trace) string {
	text := strings.TrimSpace(q.Text)
	if len(q.History) == 0 {
		return text
	}
	if p.opts.Generator == nil {
		query := concatTurns(q, p.opts.Limits.QuestionBytes)
		tr.stage("rewrite", nil, "no generation model: recent user turns concatenated: "+query)
		return query
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.ModelTimeout)
	defer cancel()
	reply, err := p.opts.Generator.Chat(ctx, ChatRequest{Messages: rewriteMessages(q)})
	query, perr := parseRewrite(reply)
	if err = errors.Join(err, perr); err != nil {
		query = concatTurns(q, p.opts.Limits.QuestionBytes)
		p.log.Warn("query rewrite failed: recent user turns concatenated", keyErr, err)
		tr.stage("rewrite", nil, fmt.Sprintf("rewrite failed (%v): recent user turns concatenated: %s", err, query))
		return query
	}
	tr.stage("rewrite", nil, "standalone query by the generation model: "+query)
	return query
}

func (p *Pipeline) expand(ctx context.Context, direct []Hit, vec vault.QueryVector, s Settings, scope vault.Scope) ([]Hit, []vault.Hop, error) {
	nb, err := p.opts.Searcher.Hops(ctx, graphSources(direct, s.FinalTopK), scope)
	if err != nil || len(nb) == 0 {
		return nil, nil, err
	}
	g := Graph{MaxPerRelation: s.GraphMaxSiblings, Discount: s.GraphDiscount, MapMinLinks: s.GraphMapMinLinks}
	ids := reachedNotes(direct, nb)
	bounds, err := p.opts.Searcher.DistanceBounds(ctx, ids, vec, scope)
	if errors.Is(err, vault.ErrOtherSpace) {
		// The index switched to a re-embedded space since the question
		// was embedded: the neighbours are read without the vector.
		vec, bounds, err = vault.QueryVector{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	chunks, dist, err := p.opts.Searcher.NearestChunks(ctx, expansionReads(ids, direct, nb, bounds, g), vec, scope)
	if errors.Is(err, vault.ErrOtherSpace) {
		chunks, dist, err = p.opts.Searcher.NearestChunks(ctx, expansionReads(ids, direct, nb, nil, g), vault.QueryVector{}, scope)
	}
	if err != nil {
		return nil, nil, err
	}
	return Expand(direct, nb, chunks, dist, g), nb, nil
}

// rerank re-scores the top candidates when a reranker is configured; on
// failure or over its budget it keeps the fused order and says so in the
// trace and the report. A failing model is logged when it starts failing
// and when it recovers, not at every question.
func (p *Pipeline) rerank(ctx context.Context, query string, candidates []Hit, topK int, tr *Trace) ([]Hit, *RerankReport) {
	rr := p.opts.Reranker
	if rr == nil {
		tr.stage("rerank", nil, "off: no rerank model")
		return candidates, nil
	}
	out, rep, err := Rerank(ctx, rr, query, candidates, topK)
	cost := fmt.Sprintf("%d requests, %d passages, %d bytes, %.0f ms", rep.Requests, rep.Passages, rep.Bytes, rep.ElapsedMS)
	if err != nil {
		if !rr.failing.Swap(true) {
			p.log.Warn("rerank failed: keeping the fused order until it answers again", keyErr, err)
		}
		tr.stage("rerank", candidates, fmt.Sprintf("skipped (%v): fused order kept; %s", err, cost))
		return candidates, &rep
	}
	if rr.failing.Swap(false) {
		p.log.Info("rerank recovered")
	}
	var moves []string
	for i, h := range out {
		if h.Chunk.RowID != candidates[i].Chunk.RowID && h.Reranked {
			moves = append(moves, fmt.Sprintf("%s now at %d (rerank %.1f)", hitLabel(h), i+1, h.Rerank))
		}
	}
	tr.stage("rerank", out, fmt.Sprintf("top %d re-scored by the %s rerank model; %s", min(topK, len(candidates)), rep.Kind, cost), moves...)
	return out, &rep
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
