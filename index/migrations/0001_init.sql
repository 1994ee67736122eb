-- The index schema. chunks_vec (vec0) is created by the store at open time,
-- because its dimension comes from the configured embedding model.

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

-- One row per source the feed follows; since is the server's opaque sequence,
-- stored verbatim and written in the same transaction as the changes it covers.
CREATE TABLE feed_state (
  source     TEXT PRIMARY KEY,
  since      TEXT NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE docs (
  doc_id       TEXT PRIMARY KEY,             -- the vault path, lower-cased
  path         TEXT NOT NULL,                -- the vault path with its real case
  name         TEXT NOT NULL,                -- lower-cased basename without .md, for link resolution
  source_id    TEXT NOT NULL DEFAULT '',     -- the source's id for the note (CouchDB _id), for tombstones without a path
  title        TEXT NOT NULL,
  rev          TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  sensitivity  TEXT NOT NULL CHECK (sensitivity IN ('open', 'personal')),
  sensitivity_override TEXT NOT NULL DEFAULT '' CHECK (sensitivity_override IN ('', 'open', 'personal')),
  topics       TEXT NOT NULL DEFAULT '',     -- titles of the topic notes that clip this note, as in the prelude
  mtime        INTEGER NOT NULL,             -- unix milliseconds
  frontmatter  TEXT NOT NULL DEFAULT '{}',   -- JSON
  indexed_at   INTEGER NOT NULL              -- unix milliseconds
) STRICT;
CREATE INDEX docs_name ON docs(name);
CREATE INDEX docs_source_id ON docs(source_id) WHERE source_id != '';

CREATE TABLE aliases (
  doc_id TEXT NOT NULL REFERENCES docs(doc_id) ON DELETE CASCADE,
  alias  TEXT NOT NULL,                      -- lower-cased
  PRIMARY KEY (doc_id, alias)
) STRICT;
CREATE INDEX aliases_alias ON aliases(alias);

-- rowid is shared with chunks_fts and chunks_vec; AUTOINCREMENT so a deleted
-- chunk's rowid is never reused and a late vector can't land on new text.
CREATE TABLE chunks (
  rowid        INTEGER PRIMARY KEY AUTOINCREMENT,
  chunk_id     TEXT NOT NULL UNIQUE,
  doc_id       TEXT NOT NULL REFERENCES docs(doc_id) ON DELETE CASCADE,
  ordinal      INTEGER NOT NULL,
  heading_path TEXT NOT NULL,
  prelude      TEXT NOT NULL,
  body         TEXT NOT NULL,
  sensitivity  TEXT NOT NULL CHECK (sensitivity IN ('open', 'personal')),
  embedded     INTEGER NOT NULL DEFAULT 0    -- 1 once chunks_vec holds its vector
) STRICT;
CREATE INDEX chunks_doc ON chunks(doc_id, ordinal);
CREATE INDEX chunks_backlog ON chunks(rowid) WHERE embedded = 0;

CREATE VIRTUAL TABLE chunks_fts USING fts5(
  prelude, body,
  content = 'chunks', content_rowid = 'rowid',
  tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts(rowid, prelude, body) VALUES (new.rowid, new.prelude, new.body);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, prelude, body) VALUES ('delete', old.rowid, old.prelude, old.body);
END;
CREATE TRIGGER chunks_fts_update AFTER UPDATE OF prelude, body ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, prelude, body) VALUES ('delete', old.rowid, old.prelude, old.body);
  INSERT INTO chunks_fts(rowid, prelude, body) VALUES (new.rowid, new.prelude, new.body);
END;

-- dst is the resolved doc_id (NULL while unresolved); for tags it is '#tag'.
-- target is the link as written (normalised, lower-cased), kept for
-- re-resolution; target_name is its last path segment, the note name it can
-- only ever resolve to, so re-resolution after a batch looks up by name.
CREATE TABLE edges (
  src         TEXT NOT NULL REFERENCES docs(doc_id) ON DELETE CASCADE,
  dst         TEXT,
  kind        TEXT NOT NULL CHECK (kind IN ('wikilink', 'topic', 'tag')),
  target      TEXT NOT NULL,
  target_name TEXT NOT NULL,
  resolved    INTEGER NOT NULL CHECK (resolved IN (0, 1)),
  PRIMARY KEY (src, kind, target)
) STRICT;
CREATE INDEX edges_dst ON edges(dst) WHERE dst IS NOT NULL;
CREATE INDEX edges_target_name ON edges(target_name) WHERE kind != 'tag';
