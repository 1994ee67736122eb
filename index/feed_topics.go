package index

import (
	"context"
	"strings"
)

// refreshTopics recomputes each note's topic memberships (the titles of the
// topic notes whose clippings region links to it) and rewrites the prelude of
// its chunks when they changed. The FTS rows follow by trigger; the vectors
// are dropped and the chunks go back on the embedding backlog. An open note
// carries only open topic notes: its prelude is searched and embedded as
// open text, and a personal topic's title must not find it.
func (w *applier) refreshTopics(ctx context.Context) error {
	type change struct{ docID, path, title, old, topics string }
	all, err := queryAll(ctx, w.q, func(c *change) []any { return []any{&c.docID, &c.path, &c.title, &c.old, &c.topics} }, `
		SELECT d.doc_id, d.path, d.title, d.topics,
			coalesce((SELECT group_concat(title, ', ') FROM (
				SELECT DISTINCT t.title FROM edges e JOIN docs t ON t.doc_id = e.src
				WHERE e.dst = d.doc_id AND e.kind = 'topic' AND (d.sensitivity = 'personal' OR t.sensitivity = 'open')
				ORDER BY t.title)), '')
		FROM docs d
		WHERE d.topics != '' OR EXISTS (SELECT 1 FROM edges e WHERE e.dst = d.doc_id AND e.kind = 'topic')`)
	if err != nil {
		return err
	}
	var changes []change
	for _, c := range all {
		if c.old != c.topics {
			changes = append(changes, c)
		}
	}
	w.preludesChanged = w.preludesChanged || len(changes) > 0
	for _, c := range changes {
		if _, err := w.q.ExecContext(ctx, `UPDATE docs SET topics = ? WHERE doc_id = ?`, c.topics, c.docID); err != nil {
			return err
		}
		if err := w.deleteVectors(ctx, c.docID); err != nil {
			return err
		}
		type ch struct {
			rowid   int64
			heading string
		}
		chs, err := queryAll(ctx, w.q, func(x *ch) []any { return []any{&x.rowid, &x.heading} }, `SELECT rowid, heading_path FROM chunks WHERE doc_id = ?`, c.docID)
		if err != nil {
			return err
		}
		for _, x := range chs {
			if _, err := w.q.ExecContext(ctx, `UPDATE chunks SET prelude = ?, embedded = 0, staged = NULL WHERE rowid = ?`,
				preludeOf(c.title, c.path, x.heading, c.topics), x.rowid); err != nil {
				return err
			}
		}
	}
	return nil
}

// preludeOf is the context line block stored beside each chunk body: searched
// and embedded with the body so a chunk is found by its note's title, path,
// section and topics, and stripped for display.
func preludeOf(title, path, headingPath, topics string) string {
	var b strings.Builder
	b.WriteString(title)
	b.WriteString("\n")
	b.WriteString(path)
	if headingPath != "" {
		b.WriteString("\n")
		b.WriteString(headingPath)
	}
	if topics != "" {
		b.WriteString("\ntopics: ")
		b.WriteString(topics)
	}
	return b.String()
}
