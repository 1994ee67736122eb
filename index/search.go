package index

// Search is the index as retrieval reads it (package rag, through its
// Searcher): full-text and vector search, the notes around those found,
// the distance bounds that decide which of them to read, and the word
// counts the coverage judgement weighs. Every method applies the scope
// inside its query, before any k or limit.
type Search struct{ db *Store }

// Search returns the index as retrieval reads it.
func (s *Store) Search() *Search { return &Search{db: s} }
