// Package rag answers questions from the index: retrieve, expand, rerank,
// assemble and answer, one file per stage, plain functions over slices of
// hits so each stage is testable alone, wired by Pipeline.
//
//   - pipeline.go: the Pipeline and the interfaces it consumes; settings.go
//     its sizes, limits.go a question's bounds.
//   - chat.go: the generation model as rag calls it (ChatModel) and its own
//     messages, request and usage.
//   - question.go: the request, its scope (vault.ScopeFor: AllowWeb sees
//     open notes only), and the earlier turns a model may be shown.
//   - hit.go: a hit, one chunk on its way through the stages, with the
//     arms that found it and how expansion reached it.
//   - retrieve.go: Pipeline.Retrieve, the stages in order, and RankNotes,
//     retrieval's whole ranking for evaluation.
//   - rewrite.go: a multi-turn question's standalone query, by the
//     generation model or by concatenated turns.
//   - query_text.go: the question's text as full-text search reads it
//     (FTSText: its words without stopwords) and its language.
//   - query_vector.go: the question's vector, in the embedding space the
//     index searches.
//   - direct.go: a question's direct hits, its full-text and vector search
//     side by side, fused and capped per note, each step in the trace.
//   - fusion.go: reciprocal rank fusion of vector and full-text hits, the
//     vector hits that vote, the per-note diversity cap.
//   - fusion_scores.go: the fusion by scores, a convex combination of each
//     arm's normalised scores (a strong vector arm's default).
//   - coverage.go, coverage_features.go: how well the vault covers the
//     question (covered, thin, silent, indexing), by a fitted model over
//     the hits' distances and the question's words.
//   - expand.go: one-hop graph expansion (topic notes, siblings, links).
//   - rerank.go: batched relevance scores from a chat model (a prompt
//     parsed strictly) or a cross-encoder's rerank endpoint, within a
//     budget, the fused order kept on any failure.
//   - assemble.go: the graph quota, graph-order assembly, citation links.
//   - answer.go: the answering contract, streamed answers, extractive
//     answers without a model.
//   - verdict.go: the generation model's verdict on the passages, read off
//     the head of its answer (Judge asks for it alone).
//   - cite.go: the citation filter, which checks an answer's wikilinks
//     against its context while it streams.
//   - web.go: the web searcher a caller plugs in, and its results as the
//     prompt lists them.
//   - trace.go: what each stage saw and changed.
//   - result.go: the one shape a retrieval and its answer leave in (Result,
//     HitView), which `ask --json` prints.
//
// Sensitivity comes first: the request's scope is decided before retrieval
// and passed into every read of the Searcher, which filters inside its
// queries. A request that may use the web never reads a personal chunk,
// never shows an earlier assistant turn to a model, and sends the web only
// the question or its rewrite.
//
// It declares the interfaces it consumes (Searcher, Embedder, ChatModel,
// CrossEncoder, WebSearcher) and the types they speak, which *index.Search and
// llm's clients satisfy (the chat model through an adapter in cmd/vaultask),
// and may import vault (the nouns: Scope, Chunk, Doc, Neighbour) and
// internal/clip (the one way text is cut to a number of runes). It never
// imports index or llm, so it links neither SQLite nor a provider's client.
package rag
