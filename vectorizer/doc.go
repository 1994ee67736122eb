// Package vectorizer is the background embedder: a client of the index that
// takes chunks waiting for a vector from the store's backlog, embeds them
// with the Embedder it declares (llm's embedders satisfy it) and hands the
// vectors back, so full-text search never waits for an embedding model.
// It sees the index through index.Vectors, the index as the embedder fills
// it (Backlog, PutVectors, Changed, and PromoteFilled, which switches an
// index re-embedding into a new space once its backlog is empty;
// ActiveBacklog and PutActiveVectors, for the notes written meanwhile, with
// the old model), as miniflux's worker beside its storage does;
// what it embeds next, and when a note's vectors become searchable, is the
// store's to decide; how much of it goes in one batch is the vectorizer's,
// from the time its embedder takes (Options.BatchTime).
//
// It may import index, internal/retry and internal/routine.
package vectorizer
