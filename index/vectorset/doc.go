// Package vectorset is the in-memory int8 copy of one embedding space's
// vectors that the index's vector search scans and its graph expansion
// bounds distances with: every vector quantised to one byte a dimension
// (one scale per vector), with its chunk's id, its note and whether the
// chunk is open. It answers three questions, all without SQL:
//
//   - set.go: which vectors it holds, kept by Put, Drop and Apply (a write's
//     changes, replayed once it commits) and compared by Diff;
//   - nearest.go: the n vectors nearest a query by the quantised cosine
//     similarity, open chunks only when asked (Nearest), scanned 32 bytes at
//     a time by internal/simd's int8 kernel;
//   - bounds.go: bounds on each of some notes' distance to a query (Bounds),
//     wide enough to hold the exact distance, which distance.go defines
//     (CosineDistance: sqlite-vec's arithmetic, in Go).
//
// It imports internal/simd alone from this module: the index reads the
// vectors from its SQLite file into a Set, one Set per embedding space, and
// keeps it current.
package vectorset
