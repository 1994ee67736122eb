-- An embedding space records the files of a built-in model beside its name
-- (vault.EmbeddingSpace.Files: a digest of their pinned sums), so that a
-- model whose files change re-embeds instead of mixing its vectors with
-- the old ones. A space recorded before holds '': the files the model was
-- pinned to then, which the writer records at its next start
-- (index/spaces.go).
ALTER TABLE spaces ADD COLUMN files TEXT NOT NULL DEFAULT '';
