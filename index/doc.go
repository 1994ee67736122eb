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
// type over the same Store (as wtf's DialService is over its one DB):
// Store.Feed, the index as a source writes it (package feed); Store.Search,
// as retrieval reads it (rag's Searcher); Store.Notes, as a reader browses
// it (mcp's Notes); Store.Vectors, as the embedder fills it (package
// vectorizer).
//
// Its files, by what they answer:
//
//   - store.go (Open, a step at a time, and Close), open.go (the driver and
//     the connections), meta.go, migrate.go and migrations/, lock.go (one
//     writer at a time);
//   - writing: commit.go (every write's transaction and the after-commit
//     hooks the caches register on), apply.go, insert.go, links.go,
//     linktext.go, topics.go, sensitivity.go, sync.go, plan.go, status.go,
//     checkpoint.go;
//   - vectors: spaces.go (the embedding spaces: one active, searched; a
//     query vector of another is refused), vectors.go (the vectors table),
//     backlog.go (what waits for a vector, and the vectors the embedder hands
//     back), active_backlog.go (the notes written while re-embedding, given a
//     vector in the active space too), vector_sets.go (each space's vectors in memory, an
//     index/vectorset.Set), vector_search.go (SearchVector, its exact
//     rescore in Go, DistanceBounds, NearestChunks), vec0.go (the one reader
//     of sqlite-vec's tables, for moving an older index's vectors out);
//   - reading: fts.go, graph.go and members.go, notes.go, stats.go.
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
// feed writes into it, vectorizer embeds its backlog, and rag and transport
// read from it through interfaces they declare, without importing it.
package index
