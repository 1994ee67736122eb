// Package index owns the SQLite file: opening it (one writer connection and a
// reader pool, WAL), the embedded migrations, the nouns (Note, Chunk, Edge,
// Hit), markdown parsing (frontmatter, wikilinks, tags, topic regions),
// chunking, sensitivity, Apply (notes and the feed checkpoint in one
// transaction) and the read primitives (FTS, vector KNN, neighbours, stats).
//
// It may import no sibling package: feed writes into it and rag reads from it.
package index
