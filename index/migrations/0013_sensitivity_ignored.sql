-- Why a note's sensitivity override is ignored, for its status: its
-- frontmatter opens or closes as Obsidian does not read it (after a blank
-- line, an indented or longer dash line, no closing '---'), so the note is
-- open as Obsidian shows it. Notes indexed before this say so once written
-- again.
ALTER TABLE docs ADD COLUMN sensitivity_ignored TEXT NOT NULL DEFAULT '';
