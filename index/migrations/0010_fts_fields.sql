-- Full-text search by field, so that BM25 can weigh a match in a title, an
-- alias or a heading apart from one in the body (bm25's column weights,
-- chosen per query by the reader), with what other notes say when they link
-- to a note as a field of its own. Rebuilt in place from chunks and docs:
-- nothing is re-chunked or re-embedded. The tokenizer stays unicode61:
-- Porter stemming was measured with this schema and lost more questions
-- than it won on both question sets together (eval/RESULTS.md).
--
-- The table is contentless: every field is derived (a note's title and
-- aliases on each of its chunks), so there is no one content table to point
-- at, and contentless_delete lets a row go by rowid alone, without the old
-- values an external-content delete needs.

-- What the linking note says around the link (markdown.Link.Context): ''
-- until the linking note is parsed again (Open backfills it from docs.text).
ALTER TABLE edges ADD COLUMN context TEXT NOT NULL DEFAULT '';

-- The link contexts of the notes that link to this one, as its chunks'
-- links field holds them. An open note carries only open notes' words
-- (Store.refreshLinkText), as an open note's prelude carries only open
-- topic notes.
ALTER TABLE docs ADD COLUMN link_text TEXT NOT NULL DEFAULT '';

DROP TRIGGER chunks_fts_insert;
DROP TRIGGER chunks_fts_delete;
DROP TRIGGER chunks_fts_update;
DROP TABLE chunks_fts;

CREATE VIRTUAL TABLE chunks_fts USING fts5(
  title, aliases, headings, path, topics, body, links,
  content = '', contentless_delete = 1,
  tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO chunks_fts(rowid, title, aliases, headings, path, topics, body, links)
  SELECT c.rowid, d.title, (SELECT coalesce(group_concat(a.alias, ' '), '') FROM aliases a WHERE a.doc_id = d.doc_id),
    c.heading_path, d.path, d.topics, c.body, d.link_text
  FROM chunks c JOIN docs d ON d.doc_id = c.doc_id;

-- A note's aliases are written before its chunks (Apply), so a new chunk
-- finds them here.
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts(rowid, title, aliases, headings, path, topics, body, links)
    SELECT new.rowid, d.title, (SELECT coalesce(group_concat(a.alias, ' '), '') FROM aliases a WHERE a.doc_id = d.doc_id),
      new.heading_path, d.path, d.topics, new.body, d.link_text
    FROM docs d WHERE d.doc_id = new.doc_id;
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
  DELETE FROM chunks_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER chunks_fts_update AFTER UPDATE OF heading_path, body ON chunks BEGIN
  DELETE FROM chunks_fts WHERE rowid = old.rowid;
  INSERT INTO chunks_fts(rowid, title, aliases, headings, path, topics, body, links)
    SELECT new.rowid, d.title, (SELECT coalesce(group_concat(a.alias, ' '), '') FROM aliases a WHERE a.doc_id = d.doc_id),
      new.heading_path, d.path, d.topics, new.body, d.link_text
    FROM docs d WHERE d.doc_id = new.doc_id;
END;
-- A note's own fields are on every one of its chunks' rows.
CREATE TRIGGER docs_fts_update AFTER UPDATE OF title, path, topics, link_text ON docs BEGIN
  DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE doc_id = new.doc_id);
  INSERT INTO chunks_fts(rowid, title, aliases, headings, path, topics, body, links)
    SELECT c.rowid, new.title, (SELECT coalesce(group_concat(a.alias, ' '), '') FROM aliases a WHERE a.doc_id = new.doc_id),
      c.heading_path, new.path, new.topics, c.body, new.link_text
    FROM chunks c WHERE c.doc_id = new.doc_id;
END;
