package index

// Feed is the index as a source writes it (package feed, and `vaultask
// index` through it): batches of notes applied with the source's
// checkpoint in one transaction, the plan and the run of a full sync, the
// reclassification that ends one, the notes the source parks, and when it
// last ran. Its writes go through the store's one writer.
type Feed struct{ db *Store }

// Feed returns the index as a source writes it.
func (s *Store) Feed() *Feed { return &Feed{db: s} }
