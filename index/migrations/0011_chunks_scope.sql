-- A chunk's sensitivity by its rowid alone. Full-text search checks the
-- scope of every chunk a pass matches, inside the query and before its
-- limit; read from the chunk's own row, that check reads the page the
-- chunk's text is on. For a word in a fifth of 100k chunks the open-only
-- query took ~180 ms through the rows and ~30-50 ms through this index
-- (~20 ms with no scope at all). SearchFTS names it (INDEXED BY).
CREATE INDEX chunks_scope ON chunks(rowid, sensitivity);
