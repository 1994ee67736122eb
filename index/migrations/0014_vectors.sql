-- The vectors move out of sqlite-vec's vec0 table chunks_vec into a plain
-- table the index owns, keyed by embedding space. Search scans the vectors'
-- int8 copies in memory (index/vectorset) and rescores its candidates in
-- Go, so nothing needs vec0's KNN any more; its shadow tables were read
-- directly, a private format, and it never reused a deleted vector's slot.
-- The vectors themselves are copied by Go in this migration's transaction
-- (vec0Table, which checks sqlite-vec's version first), then chunks_vec is
-- dropped.

-- An embedding space: the model, with the prefixes it puts before a query
-- and a document, and the dimension, whose vectors are comparable. One is
-- active, the one searched. A second, being filled in the background when
-- the model changes, is what 'filling' is for: chunks.embedded and
-- chunks.staged then mean "has its vector in the space being filled", which
-- is the active one while no other is.
CREATE TABLE spaces (
  id              INTEGER PRIMARY KEY,
  model           TEXT NOT NULL,
  dim             INTEGER NOT NULL CHECK (dim > 0),
  query_prefix    TEXT NOT NULL DEFAULT '',
  document_prefix TEXT NOT NULL DEFAULT '',
  state           TEXT NOT NULL CHECK (state IN ('active', 'filling')),
  UNIQUE (model, dim, query_prefix, document_prefix)
) STRICT;
CREATE UNIQUE INDEX spaces_one_active ON spaces(state) WHERE state = 'active';

-- One float32 vector (little-endian, dim of them) of a chunk (chunks.rowid)
-- in a space. A rowid table: at 2 KB a vector it keeps each row whole on one
-- 4 KB page, where WITHOUT ROWID's index pages spill a row of more than
-- 1 KB onto an overflow page (measured at 100k 512-d vectors: 412 MB and
-- 0.8-1.1 ms for 80 lookups, against 468 MB and 5.5-7.4 ms). Two vectors do
-- not fit a 4 KB page, so they take twice their size; 8 or 16 KB pages
-- would pack them closer (275 and 236 MB), but a page size is the whole
-- file's, and an existing index's changes only by a VACUUM outside WAL.
-- Deleting a space deletes its vectors.
CREATE TABLE vectors (
  space     INTEGER NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
  chunk     INTEGER NOT NULL,
  embedding BLOB NOT NULL,
  PRIMARY KEY (space, chunk)
) STRICT;

-- The space the index recorded in meta becomes the active space.
INSERT INTO spaces(model, dim, state)
  SELECT m.value, CAST(d.value AS INTEGER), 'active' FROM meta m JOIN meta d
  WHERE m.key = 'embedding_model' AND d.key = 'embedding_dim';
DELETE FROM meta WHERE key IN ('embedding_model', 'embedding_dim');
