-- note_status also holds the notes a source skips, with the reason (a binary
-- attachment, outside the corpus globs, an unclean path, unreadable), so
-- that "why is this note not found?" has an answer. SQLite cannot change a
-- CHECK constraint in place: the table is rebuilt.
CREATE TABLE note_status_new (
  source_id  TEXT PRIMARY KEY,               -- the source's id for the note (CouchDB _id, or a folder's path)
  path       TEXT NOT NULL,                  -- the vault path with its real case
  rev        TEXT NOT NULL,                  -- the revision that could not be read
  state      TEXT NOT NULL CHECK (state IN ('pending', 'incomplete', 'skipped')),
  reason     TEXT NOT NULL,                  -- e.g. "2 missing chunks: h:…" or "binary attachment"
  since      INTEGER NOT NULL,               -- unix milliseconds this revision was first parked or skipped
  updated_at INTEGER NOT NULL                -- unix milliseconds
) STRICT;
INSERT INTO note_status_new SELECT source_id, path, rev, state, reason, since, updated_at FROM note_status;
DROP TABLE note_status;
ALTER TABLE note_status_new RENAME TO note_status;
CREATE INDEX note_status_state ON note_status(state, path);
