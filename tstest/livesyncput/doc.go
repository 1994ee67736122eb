// Package livesyncput writes notes into a CouchDB database the way
// Obsidian's Self-hosted LiveSync does: the text cut into content-addressed
// chunk documents ("leaf", id "h:…"), then the note's metadata document
// listing them, in one _bulk_docs request. It is what the tests, the
// benchmarks and the demo use to play the part of a phone or a laptop
// editing the vault. vaultask itself never writes to CouchDB.
//
// Of this module it imports only feed/livesync, for the document ids.
package livesyncput
