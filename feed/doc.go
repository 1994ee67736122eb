// Package feed reads Self-hosted LiveSync's CouchDB database into the index,
// read-only: it never writes to CouchDB. It owns the kivik client and its
// startup checks (credentials, the vault's _local settings, the end-to-end
// encryption gate), the Follower of the continuous _changes feed (batches
// applied with their checkpoint in one transaction, notes parked until their
// chunks arrive, reconnection with backoff), the Reconciler that diffs the
// whole database (_all_docs) against the index, the small folder source for
// vaults without LiveSync, and the Corpus (corpus.go: the include and
// exclude globs) that picks the notes either source indexes. It writes
// through index.Feed, the index as a source writes it: everything it learns
// goes through Apply or Sync; document decoding is package feed/livesync.
//
// Every CouchDB request is made in the couch*.go files, the only ones that
// import kivik (TestKivikOnlyInCouchFiles): couch.go connects and reads the
// database's settings, sequence and identity, couch_read.go reads documents
// (by id, by key, _all_docs pages) and couch_changes.go the continuous
// _changes feed. The rest of the package works on what they return: the
// Follower (follower.go, changes.go, batch.go, parking.go, stats.go), the
// Reconciler (reconcile.go, and scan.go for the listing), and notes.go and
// decode.go, which read notes whole and judge decoded documents by the
// vault's settings.
//
// It may import index, vault and feed/livesync, and no other package of this
// module.
package feed
