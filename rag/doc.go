// Package rag answers questions from the index: retrieve, expand, rerank,
// assemble and answer, one file per stage, plain functions over slices of
// hits so each stage is testable alone, wired by Pipeline.
//
//   - pipeline.go: the Pipeline and the interfaces it consumes; settings.go
//     its sizes, limits.go a question's bounds.
//   - chat.go: the generation model as rag calls it (ChatModel) and its own
//     messages, request and usage.
//   - question.go: the request, and its scope (vault.ScopeFor: AllowWeb sees
//     open notes only).
//   - direct.go: a question's direct hits, its full-text and vector search
//     side by side, fused and capped per note, each step in the trace.
//   - retrieve.go: multi-turn rewrite, the full-text query, reciprocal rank
//     fusion of vector and full-text hits, the per-note diversity cap.
//   - expand.go: one-hop graph expansion (topic notes, siblings, links).
//   - rerank.go: batched relevance scores from a chat model (a prompt
//     parsed strictly) or a cross-encoder's rerank endpoint, within a
//     budget, the fused order kept on any failure.
//   - assemble.go: the graph quota, graph-order assembly, citation links.
//   - answer.go: the answering contract, streamed answers, extractive
//     answers without a model.
//   - cite.go: the citation filter, which checks an answer's wikilinks
//     against its context while it streams.
//   - web.go: the web searcher a caller plugs in, and the thin-coverage trigger.
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
// CrossEncoder, WebSearcher) and the types they speak, which *index.Store and
// llm's clients satisfy (the chat model through an adapter in cmd/vaultask),
// and may import vault (the nouns: Scope, Chunk, Doc, Neighbour) and
// internal/clip (the one way text is cut to a number of runes). It never
// imports index or llm, so it links neither SQLite nor a provider's client.
package rag
