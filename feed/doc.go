// Package feed reads Self-hosted LiveSync's CouchDB database into the index,
// read-only: it never writes to CouchDB. It owns the kivik client and its
// startup checks (credentials, the vault's _local settings, the end-to-end
// encryption gate), the Follower of the continuous _changes feed (batches
// applied with their checkpoint in one transaction, notes parked until their
// chunks arrive, reconnection with backoff), the Reconciler that diffs the
// whole database (_all_docs) against the index, and the small folder source
// for vaults without LiveSync. Everything it learns goes through
// index.Store.Apply or Sync; document decoding is package feed/livesync.
//
// It may import index, vault and feed/livesync, and no other package of this
// module.
package feed
