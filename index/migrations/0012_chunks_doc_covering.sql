-- A note's chunks with their scope and whether each has a vector, from the
-- index alone. Graph expansion lists the chunks of every note it reaches
-- (some thousands at 100k chunks) to bound their distances; read from the
-- rows, each chunk's embedded flag is past its text. chunks_doc keeps its
-- name and its order, so every read that names it is unchanged.
DROP INDEX chunks_doc;
CREATE INDEX chunks_doc ON chunks(doc_id, ordinal, sensitivity, embedded);
