// Package index owns the SQLite file: opening it (one writer connection and a
// reader pool, WAL), the embedded migrations, markdown parsing (frontmatter,
// wikilinks, tags, topic regions, through index/markdown), chunking,
// classification (the personal-path globs), Apply (notes and the feed
// checkpoint in one transaction) and the read primitives (FTS, vector KNN,
// neighbours, notes, stats), which return vault's nouns (vault.Chunk,
// vault.Doc, vault.Neighbour, …) and apply a vault.Scope inside every query.
//
// A Store is the one file, its writer and its readers: Open, Close, Path
// and Stats. Each consumer sees it through a face of its own size, a small
// type over the same Store (as wtf's DialService is over its one DB),
// declared beside the Store in store.go; each face's files carry its name:
//
//   - Feed (feed_*.go), the index as a source writes it (package feed):
//     Sync and the plan of one (feed_sync.go, feed_plan.go); Apply
//     (feed_apply.go, feed_insert.go, feed_topics.go, feed_linktext.go),
//     with the batch it writes and the transaction that writes it
//     (feed_batch.go); the classification (feed_sensitivity.go); the
//     checkpoint written with each batch, and the last run
//     (feed_checkpoint.go); the notes a source parks (feed_status.go);
//   - Search (search.go, search_*.go), as retrieval reads it (rag's
//     Searcher): full text (search_fts.go, search_terms.go), vectors
//     (search_vector.go: SearchVector, its exact rescore in Go,
//     DistanceBounds, NearestChunks; search_vectorsets.go: each space's
//     vectors in memory, an index/vectorset.Set) and the graph
//     (search_graph.go, search_members.go);
//   - Browse (browse.go), as a reader browses it (mcp's Notes);
//   - Vectors (vectors.go, vectors_*.go), as the embedder fills it
//     (package vectorizer): what waits for a vector and the vectors handed
//     back (vectors.go); the notes written while re-embedding, given a
//     vector in the active space too (vectors_active_backlog.go); the one
//     reader of sqlite-vec's tables, for moving an older index's vectors
//     out (vectors_vec0.go).
//
// The rest is the Store's, shared by the faces: store.go (Open, a step at a
// time, and Close), open.go (the driver and the connections), lock.go (one
// writer at a time), migrate.go and migrations/, meta.go (the index's own
// facts, and the counters its caches are keyed by), tx.go (reads, and the
// statements prepared once), commit.go (every write's transaction and the
// after-commit hooks the caches register on), spaces.go (the embedding
// spaces: one active, searched; a query vector of another is refused; and
// how their vectors are stored), links.go (how a [[link]] resolves, on
// write and on read) and stats.go.
//
// The vector KNN scans an int8 copy of the active space's vectors held in
// memory, kept by every write that changes them, and rescores its
// candidates on the float vectors in the file; graph expansion bounds the
// distances of the notes it reaches through the same copy, which knows each
// note's vectors (DistanceBounds), and reads exactly only those that may be
// kept. The graph walk (Hops) remembers what topic notes clip
// (memberCache), full-text search how many chunks hold each word
// (ftsCounts). Every such cache is on one list of after-commit hooks, which
// each write of the store hands what it changed.
//
// It may import vault, index/markdown, index/vectorset and internal/routine:
// feed writes into it through Feed, vectorizer embeds its backlog through
// Vectors, and rag and transport read from it through interfaces they
// declare, which Search and Browse satisfy, without importing it.
package index
