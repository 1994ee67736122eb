// Package index owns the SQLite file: opening it (one writer connection and a
// reader pool, WAL), the embedded migrations, markdown parsing (frontmatter,
// wikilinks, tags, topic regions, through index/markdown), chunking,
// classification (the personal-path globs), Apply (notes and the
// feed checkpoint in one transaction) and the read primitives (FTS, vector
// KNN, neighbours, notes, stats), which return vault's nouns (vault.Chunk,
// vault.Doc, vault.Neighbour, …) and apply a vault.Scope inside every query.
// The vector KNN scans an int8 copy of the vectors held in memory (an
// index/vectorset.Set), kept by every write that changes them, and rescores
// its shortlist on the float vectors in the file; graph expansion bounds
// the distances of the notes it reaches through the same copy, which knows
// each note's vectors (DistanceBounds), and reads exactly only those that
// may be kept. The graph walk (Hops) remembers what topic notes clip
// (memberCache), full-text search how many chunks hold each word
// (ftsCounts). Every such cache is on one list of after-commit hooks
// (commit.go), which each write of the store hands what it changed.
//
// It may import vault, index/markdown, index/vectorset and internal/retry and
// internal/routine: feed writes into it, and rag and transport read from it
// through interfaces they declare, without importing it.
package index
