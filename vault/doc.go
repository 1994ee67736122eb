// Package vault is the ground floor: the nouns every other package speaks,
// as plain types without I/O. Scope (what a read may see, its zero value the
// safe one) and ScopeFor, the one home of "a request that may use the web
// sees open notes only"; the sensitivity values; Chunk, Doc, Relation,
// Neighbour and Topic as reads return them; NoteInput, NoteQuery, NoteEntry,
// NoteText and the note states; full-text field weights; EmbeddingSpace
// and QueryVector, a question embedded and tagged with its space; a path's
// identities (see path.go); and the wikilink scanner (Wikilinks) that the
// index reads links with and rag shows them as text with.
//
// It imports only the standard library, so that rag, transport and eval can
// name these types without linking SQLite, and every package of the module
// may import it.
package vault
