-- A vector waiting for the rest of its note: a large note is embedded in
-- slices, between which other notes are served, and its vectors become
-- searchable together, once the last slice is done, so a query never sees a
-- note half embedded. Rewriting the chunk drops it.
ALTER TABLE chunks ADD COLUMN staged BLOB;
DROP INDEX chunks_backlog;
CREATE INDEX chunks_backlog ON chunks(rowid) WHERE embedded = 0 AND staged IS NULL;
