package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/vault"
)

// Notes is the index as a reader browses it (the MCP tools and resources,
// through mcp.Notes): a note by name, its text, its neighbours, the topics
// and the list of notes. Every method applies the scope inside its
// queries.
type Notes struct{ db *Store }

// Notes returns the index as a reader browses it.
func (s *Store) Notes() *Notes { return &Notes{db: s} }

// ResolveNote finds the note ref names among the notes scope may see: its
// vault path in any case, with or without ".md", else as a [[wikilink]]
// resolves (a path's end, a basename, an alias). Other notes of the same
// name that scope may see come back as alternatives, best first. Under
// ScopeOpen a personal note is never the answer nor an alternative, so a
// refusal says nothing about it.
func (n *Notes) ResolveNote(ctx context.Context, ref string, scope vault.Scope) (vault.Doc, []vault.Doc, error) {
	ref = strings.TrimSpace(ref)
	var best vault.Doc
	var alts []vault.Doc
	err := n.db.read(ctx, "resolve note", func(tx *sql.Tx) error {
		key := vault.LinkKey(ref)
		if key == "" {
			return vault.ErrNoNote
		}
		id := ""
		for _, exact := range []string{vault.DocID(ref), vault.DocID(ref) + ".md"} {
			docs, err := readDocs(ctx, tx, []string{exact}, scope)
			if err != nil {
				return err
			}
			if len(docs) == 1 {
				id = docs[0].DocID
				break
			}
		}
		if id == "" {
			var err error
			if id, err = resolveIn(ctx, tx, key, scope); err != nil {
				return err
			}
		}
		if id == "" {
			return vault.ErrNoNote
		}
		docs, err := readDocs(ctx, tx, []string{id}, scope)
		if err != nil || len(docs) == 0 {
			return errors.Join(err, vault.ErrNoNote)
		}
		best = docs[0]
		namesakes, err := queryAll(ctx, tx, one[string], `SELECT doc_id FROM docs WHERE name = ? AND doc_id != ? AND (? = 0 OR sensitivity = 'open')
			ORDER BY length(path), doc_id LIMIT 10`, noteName(best.Path), best.DocID, scope.OpenOnly())
		if err != nil {
			return err
		}
		docs, err = readDocs(ctx, tx, namesakes, scope)
		byID := map[string]vault.Doc{}
		for _, d := range docs {
			byID[d.DocID] = d
		}
		for _, id := range namesakes {
			if d, ok := byID[id]; ok {
				alts = append(alts, d)
			}
		}
		return err
	})
	return best, alts, err
}

// ReadNote returns the text of docID when scope may see it (ErrNoNote
// otherwise): limit bytes from offset (limit <= 0: to the end), cut at
// UTF-8 boundaries. Notes indexed before the index kept whole texts are read
// back from their chunks, without the frontmatter.
func (n *Notes) ReadNote(ctx context.Context, docID string, scope vault.Scope, offset, limit int) (vault.NoteText, error) {
	var out vault.NoteText
	err := n.db.read(ctx, "read note", func(tx *sql.Tx) error {
		docs, err := readDocs(ctx, tx, []string{docID}, scope)
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			return vault.ErrNoNote
		}
		out.Doc = docs[0]
		var text sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT text FROM docs WHERE doc_id = ?`, docID).Scan(&text); err != nil {
			return err
		}
		if !text.Valid {
			bodies, err := queryAll(ctx, tx, one[string], `SELECT body FROM chunks WHERE doc_id = ? ORDER BY ordinal`, docID)
			if err != nil {
				return err
			}
			text.String = strings.Join(bodies, "\n\n")
		}
		out.Length = len(text.String)
		out.Offset = min(max(offset, 0), out.Length)
		end := out.Length
		if limit > 0 {
			end = min(out.Offset+limit, out.Length)
		}
		out.Offset, end = runeStart(text.String, out.Offset), runeStart(text.String, end)
		out.Text = text.String[out.Offset:end]
		return nil
	})
	return out, err
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return i
}

// Topics lists the topic notes scope may see, each with the members scope
// may see, by path.
func (n *Notes) Topics(ctx context.Context, scope vault.Scope) ([]vault.Topic, error) {
	type row struct {
		d vault.Doc
		n int
	}
	rows, err := queryAll(ctx, n.db.reader, func(r *row) []any { return append(docFields(&r.d), &r.n) },
		`SELECT `+docColumns+`, (SELECT count(DISTINCT e.dst) FROM edges e JOIN docs m ON m.doc_id = e.dst
			WHERE e.src = d.doc_id AND e.kind = 'topic' AND (? = 0 OR m.sensitivity = 'open'))
		FROM docs d WHERE substr(d.path, 1, length(?)) = ? AND (? = 0 OR d.sensitivity = 'open')
		ORDER BY d.path`, scope.OpenOnly(), markdown.TopicFolder, markdown.TopicFolder, scope.OpenOnly())
	if err != nil {
		return nil, fmt.Errorf("topics: %w", err)
	}
	out := make([]vault.Topic, len(rows))
	for i, r := range rows {
		out[i] = vault.Topic{Doc: r.d, Members: r.n}
	}
	return out, nil
}

// NoteList lists the notes q selects, by path, and how many there are in
// all before the paging (q.After, q.Offset, q.Limit).
func (n *Notes) NoteList(ctx context.Context, q vault.NoteQuery) ([]vault.NoteEntry, int, error) {
	switch q.State {
	case "", vault.StatusIndexed, vault.StatusPending, vault.StatusIncomplete, vault.StatusSkipped:
	default:
		return nil, 0, fmt.Errorf("note list: unknown state %q", q.State)
	}
	if q.Limit <= 0 {
		q.Limit = 100
	}
	open := q.Scope.OpenOnly()
	pattern := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.ToLower(q.Path)) + "%"
	const listing = `
		SELECT d.path, d.title, 'indexed', d.sensitivity, d.rev, trim(d.plain_text || ' ' || d.sensitivity_problem || d.sensitivity_ignored), d.indexed_at, 0,
			(SELECT count(*) FROM chunks c WHERE c.doc_id = d.doc_id),
			(SELECT count(*) FROM chunks c WHERE c.doc_id = d.doc_id AND c.embedded = 1)
		FROM docs d
		WHERE (?1 = '' OR ?1 = 'indexed') AND (?2 = 0 OR d.sensitivity = 'open') AND lower(d.path) LIKE ?3 ESCAPE '\'
		UNION ALL
		SELECT n.path, '', n.state, '', n.rev, n.reason, 0, n.since, 0, 0
		FROM note_status n
		WHERE (?1 = '' OR ?1 = n.state) AND ?2 = 0 AND lower(n.path) LIKE ?3 ESCAPE '\'`
	var total int
	var out []vault.NoteEntry
	err := n.db.read(ctx, "note list", func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (`+listing+`)`, q.State, open, pattern).Scan(&total); err != nil {
			return err
		}
		type row struct {
			e                vault.NoteEntry
			indexedAt, since int64
		}
		rows, err := queryAll(ctx, tx, func(r *row) []any {
			return []any{&r.e.Path, &r.e.Title, &r.e.State, &r.e.Sensitivity, &r.e.Rev, &r.e.Reason, &r.indexedAt, &r.since, &r.e.Chunks, &r.e.Vectors}
		}, `SELECT * FROM (`+listing+`) WHERE ?6 = '' OR path > ?6 ORDER BY 1, 3 LIMIT ?4 OFFSET ?5`, q.State, open, pattern, q.Limit, max(q.Offset, 0), q.After)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if r.indexedAt > 0 {
				r.e.IndexedAt = time.UnixMilli(r.indexedAt)
			}
			if r.since > 0 {
				r.e.Since = time.UnixMilli(r.since)
			}
			out = append(out, r.e)
		}
		return nil
	})
	return out, total, err
}
