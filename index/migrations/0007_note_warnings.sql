-- Why a note was indexed other than as it asks, for its status: read as
-- plain text because its markdown is beyond what the parser handles in
-- bounded time, or made personal because its frontmatter's sensitivity
-- override is malformed (fail closed).
ALTER TABLE docs ADD COLUMN plain_text TEXT NOT NULL DEFAULT '';
ALTER TABLE docs ADD COLUMN sensitivity_problem TEXT NOT NULL DEFAULT '';
