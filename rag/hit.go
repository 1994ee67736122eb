package rag

import (
	"slices"

	"github.com/vaultask/vaultask/vault"
)

// Source is a retrieval arm that found a hit.
type Source string

// The arms, in the order a hit's Sources lists them.
const (
	FromVector Source = "vector"
	FromFTS    Source = "fts"
	FromGraph  Source = "graph"
)

// Hit is one chunk on its way through the pipeline.
type Hit struct {
	Chunk   vault.Chunk
	Sources []Source // the arms that found it (provenance)
	// VectorRank and FTSRank are 1-based ranks in each arm, 0 where the arm
	// did not return the chunk.
	VectorRank, FTSRank int
	// Distance is the cosine distance between the chunk and the query
	// embedding, when HasDistance. Fused scores say nothing about relevance;
	// this does, and the web trigger reads it.
	Distance    float64
	HasDistance bool
	// Score orders hits, higher first: the RRF score for a direct hit,
	// graph_discount × the reaching hit's score for an expanded one.
	Score float64
	// Graph says how an expanded hit was reached; nil for a direct hit.
	Graph *Reach
	// Rerank is the reranker's relevance when Reranked: 0–10 from a chat
	// model, a cross-encoder's own scale (llama-server: raw logits).
	Rerank   float64
	Reranked bool
}

// Reach is how graph expansion reached a note.
type Reach struct {
	Relation vault.Relation
	From     string // path of the hit's note the hop started at
	Via      string // path of the shared topic note, for a sibling
	// Map is set for a link from a map of content: a hit note that links
	// to at least graph_map_min_links notes (see expandHits).
	Map bool
}

// From reports whether arm found h.
func (h Hit) From(arm Source) bool { return slices.Contains(h.Sources, arm) }
