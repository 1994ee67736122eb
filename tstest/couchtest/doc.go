// Package couchtest gives tests a real CouchDB-compatible server and loads
// LiveSync database dumps into it. Only _test.go files and the benchmarks
// (devtools/bench, through Launch, CreateDB and Load) import it; it imports
// no package of this module.
//
// Start returns one server per test binary: the one at COUCH_URL when set,
// otherwise server/server.js (express-pouchdb 4.2.0 over in-memory PouchDB
// 7.3.1, admin admin/s3cret) started on a free 127.0.0.1 port. Its npm
// packages come from scripts/setup.sh. Use Main in TestMain so the server is
// killed when the tests end; if the test binary dies first (a -timeout panic
// skips TestMain's cleanup), the server exits on its own when its stdin pipe
// closes. NewDB gives each test its own database; LoadFixture, LoadAllDocs,
// ReadChanges with ReplayChanges, and PutLocal fill it from the dumps in
// testdata/ and in the corpus beside the repository (tstest/corpustext finds
// it).
//
// The helpers use net/http with a client that dials loopback addresses only.
//
// What tests must know about this server (the full list is in
// ../shared/couch-test-server/NOTES.md):
//
//   - Sequences are integers (seq, last_seq, update_seq), not CouchDB 3's
//     opaque strings; kivik reports them as strings such as "12". Don't parse
//     them. A loaded database numbers its docs afresh, so its seqs differ
//     from the dump's (help's update_seq is 3976 in the dump, 3970 reloaded).
//   - Loading keeps every _rev (new_edits:false). With only _rev and no
//     _revisions, as in the dumps, the stored history is that one revision
//     ("2-abc" with no "1-"), enough for a follower; a doc already present
//     under another rev would become a conflict, so load into a fresh NewDB.
//   - A new_edits:false _bulk_docs request is written in _id order, not in the
//     request's; ReplayChanges cuts its requests so the replayed _changes
//     order is the dump's, notes before their chunks where the dump had them.
//   - _local docs (LiveSync's sync parameters and milestone) are in neither
//     _all_docs nor _changes, so LoadFixture writes them with PutLocal; their
//     rev is this database's ("0-1"), not the dump's.
//   - _all_docs without keys ends at "\uffff": ids starting outside the BMP
//     (hub's "🗂️ Hub.md") are missing from _all_docs listings and dumps but
//     are in _changes and doc_count. Real CouchDB lists them.
//   - since= a garbage, opaque or future seq answers 200 with no results, and
//     longpoll/continuous feeds with it never deliver anything; CouchDB 3
//     answers 400. timeout and limit are ignored by longpoll and continuous
//     feeds, which never end on their own: use context deadlines. A heartbeat
//     (newline) comes every 6 s even when not asked for.
//   - So a continuous feed never ends cleanly here, and kivik v4.5.2's panic
//     on a clean end (nil LastSeq in couchdb.changesRows) never shows in these
//     tests, though real CouchDB triggers it on timeout or limit.
//   - Soft-deleted LiveSync notes ("deleted": true in the body) are ordinary
//     live docs; only _deleted tombstones get "deleted": true in _changes. A
//     GET of a tombstone says reason "missing" (CouchDB: "deleted"); the db
//     info has no doc_del_count.
//   - With an admin set, new databases are readable and writable without
//     credentials (CouchDB 3 makes them admin-only), so auth failures only
//     show with wrong credentials or a _security object with members.
package couchtest
