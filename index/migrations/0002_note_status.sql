-- Notes a source could not index yet: a LiveSync note whose chunks are not
-- visible (pending), or still not after a bounded time (incomplete). The
-- follower writes a row before it commits a checkpoint past the note, so a
-- restart retries it; the row goes when the note is indexed or deleted.
CREATE TABLE note_status (
  source_id  TEXT PRIMARY KEY,               -- the source's id for the note (CouchDB _id)
  path       TEXT NOT NULL,                  -- the vault path with its real case
  rev        TEXT NOT NULL,                  -- the revision that could not be read
  state      TEXT NOT NULL CHECK (state IN ('pending', 'incomplete')),
  reason     TEXT NOT NULL,                  -- e.g. "2 missing chunks: h:…" or "size mismatch"
  since      INTEGER NOT NULL,               -- unix milliseconds this revision was first parked
  updated_at INTEGER NOT NULL                -- unix milliseconds
) STRICT;
