// Package feed reads Self-hosted LiveSync's CouchDB database, read-only: it
// decodes LiveSync documents (chunk reassembly, compression, E2EE, obfuscated
// paths), follows _changes with a persisted checkpoint, and reconciles against
// _all_docs. Everything it learns is handed to index.Store.Apply.
//
// It may import index and no other sibling package.
package feed
