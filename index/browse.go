package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/vault"
)

// ResolveNote finds the note ref names among the notes scope may see: its
// vault path in any case, with or without ".md", else as a [[wikilink]]
// resolves (a path's end, a basename, an alias). Other notes of the same
// name that scope may see come back as alternatives, best first. Under
// ScopeOpen a personal note is never the answer nor an alternative, so a
// refusal says nothing about it.
func (b *Browse) ResolveNote(ctx context.Context, ref string, scope vault.Scope) (vault.Doc, []vault.Doc, error) {
	ref = strings.TrimSpace(ref)
	var best vault.Doc
	var alts []vault.Doc
	err := b.db.read(ctx, "resolve note", func(tx *sql.Tx) error {
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
func (b *Browse) ReadNote(ctx context.Context, docID string, scope vault.Scope, offset, limit int) (vault.NoteText, error) {
	var out vault.NoteText
	err := b.db.read(ctx, "read note", func(tx *sql.Tx) error {
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
func (b *Browse) Topics(ctx context.Context, scope vault.Scope) ([]vault.Topic, error) {
	type row struct {
		d vault.Doc
		n int
	}
	rows, err := queryAll(ctx, b.db.reader, func(r *row) []any { return append(docFields(&r.d), &r.n) },
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
func (b *Browse) NoteList(ctx context.Context, q vault.NoteQuery) ([]vault.NoteEntry, int, error) {
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
	err := b.db.read(ctx, "note list", func(tx *sql.Tx) error {
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

// Paths lists every indexed note's path, sorted.
func (b *Browse) Paths(ctx context.Context) ([]string, error) {
	out, err := queryAll(ctx, b.db.reader, one[string], `SELECT path FROM docs ORDER BY path`)
	if err != nil {
		return nil, fmt.Errorf("list paths: %w", err)
	}
	return out, nil
}

// Neighbours returns the notes one hop from each of docIDs: its topic notes,
// the notes it clips when it is a topic note (members), the other notes its
// topic notes clip (siblings), the notes it links to and the notes that link
// to it. Everything on the way is read under scope (see Hops), and the hops
// and their notes in one snapshot. Each note's neighbours come in a stable
// order: by relation, then path.
func (b *Browse) Neighbours(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Neighbour, error) {
	if len(docIDs) == 0 {
		return nil, nil
	}
	var out []vault.Neighbour
	err := b.db.read(ctx, "neighbours", func(tx *sql.Tx) error {
		hops, err := b.db.readHops(ctx, tx, docIDs, scope)
		if err != nil || len(hops) == 0 {
			return err
		}
		var ids []string
		seen := map[string]bool{}
		for _, h := range hops {
			if !seen[h.To] {
				seen[h.To] = true
				ids = append(ids, h.To)
			}
		}
		docs, err := readDocs(ctx, tx, ids, scope)
		if err != nil {
			return err
		}
		byID := make(map[string]vault.Doc, len(docs))
		for _, d := range docs {
			byID[d.DocID] = d
		}
		for _, h := range hops {
			if d, ok := byID[h.To]; ok {
				out = append(out, vault.Neighbour{From: h.From, Relation: h.Relation, Via: h.Via, Doc: d})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortNeighbours(out)
	return out, nil
}

// sortNeighbours orders each start's neighbours by relation, then path.
func sortNeighbours(out []vault.Neighbour) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.Relation != b.Relation {
			return relationOrder[a.Relation] < relationOrder[b.Relation]
		}
		if a.Doc.Path != b.Doc.Path {
			return a.Doc.Path < b.Doc.Path
		}
		return a.Via < b.Via
	})
}
