// Package livesync decodes the documents that the Obsidian plugin
// "Self-hosted LiveSync" writes into CouchDB, following the format described
// in the project's shared livesync/FORMAT.md. It is pure: no network, no
// database. A _changes follower and an _all_docs reconcile both hand it raw
// document JSON and get back a classified Doc; notes are then rebuilt from
// their chunks through a ChunkSource that the caller fills and refetches.
//
// It owns document classification, path recovery (including obfuscated and
// end-to-end encrypted metadata), chunk decryption and decompression, note
// reassembly with its integrity checks, and the two _local documents a reader
// needs (sync parameters and milestone).
//
// decode.go turns a raw document into a Doc, by the rules of FORMAT.md §1
// in classify.go; e2ee.go recognises end-to-end encryption and decrypts
// paths, metadata and inline chunks with crypto.go's keys; read.go
// reassembles a note from its chunks (encoding.go undoes their
// compression and binary encodings); local.go parses the _local documents
// and id.go derives the _id LiveSync gives a path.
//
// It may import no sibling package.
package livesync
