-- The whole text of each note as the source delivered it, for reading a
-- note back (an MCP client's vault_read) and for reclassifying it from its
-- frontmatter when the sensitivity settings change. NULL for notes indexed
-- before this column: they are read back from their chunks until rewritten.
ALTER TABLE docs ADD COLUMN text TEXT;
