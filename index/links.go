package index

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/vaultask/vaultask/vault"
)

// Link resolution, as Obsidian resolves a [[wikilink]]: when a note is
// written (its outgoing edges), when a batch changes which notes a name can
// mean (resolvePending), and when a reader checks a citation or follows a
// link under a request's scope (ResolveLinks, and the graph reads).

// resolveIn finds the note a link key names among the notes scope may see,
// as Obsidian does: a path-qualified key exactly, else as the end of a
// longer path; a bare name by basename; then frontmatter aliases. Among
// several candidates the shortest path wins, ties broken by doc_id.
func resolveIn(ctx context.Context, q querier, key string, scope vault.Scope) (string, error) {
	var docID sql.NullString
	err := q.QueryRowContext(ctx, `SELECT `+resolveSQL("?1", "?2", "?3"), key, targetName(key), scope.OpenOnly()).Scan(&docID)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", key, err)
	}
	return docID.String, nil
}

// resolveSQL is resolveIn as an SQL expression, so that a query can
// resolve every link it reads in place (the graph reads under ScopeOpen):
// key is the link key, name its last path segment (targetName) and open
// whether scope sees open notes only (1) or every note (0), each an SQL
// expression. It is NULL when no note the scope sees has that name (or,
// for a bare name, that alias). Only the branch the key's shape picks is
// evaluated, and the aliases only without a note of that name.
func resolveSQL(key, name, open string) string {
	exact := `(` + key + ` || '.md')`
	return `CASE WHEN instr(` + key + `, '/') > 0 THEN
			(SELECT r.doc_id FROM docs r
			WHERE r.name = ` + name + ` AND (r.doc_id = ` + exact + ` OR substr(r.doc_id, -length('/' || ` + exact + `)) = '/' || ` + exact + `)
				AND (` + open + ` = 0 OR r.sensitivity = 'open')
			ORDER BY r.doc_id != ` + exact + `, length(r.path), r.doc_id LIMIT 1)
		ELSE coalesce(
			(SELECT r.doc_id FROM docs r WHERE r.name = ` + key + ` AND (` + open + ` = 0 OR r.sensitivity = 'open')
			ORDER BY length(r.path), r.doc_id LIMIT 1),
			(SELECT a.doc_id FROM aliases a JOIN docs r ON r.doc_id = a.doc_id WHERE a.alias = ` + key + ` AND (` + open + ` = 0 OR r.sensitivity = 'open')
			ORDER BY length(r.path), r.doc_id LIMIT 1))
		END`
}

// resolve finds the note a link key names among all notes; see resolveIn.
func resolve(ctx context.Context, q querier, key string) (string, error) {
	return resolveIn(ctx, q, key, vault.ScopeAll)
}

// resolve resolves a link key of a note being written, once per key per
// transaction: notes link to the same few notes again and again. An answer
// a later note of the transaction changes (a shorter namesake, a new alias)
// is made good by resolvePending, which resolves again every link whose
// name or alias the transaction wrote or removed.
func (w *applier) resolve(ctx context.Context, key string) (string, error) {
	if dst, ok := w.resolved[key]; ok {
		return dst, nil
	}
	dst, err := resolve(ctx, w.q, key)
	if err != nil {
		return "", err
	}
	w.resolved[key] = dst
	return dst, nil
}

// targetName is the last path segment of a link key: the only note name it
// can resolve to (or, for a bare key, the alias it may name).
func targetName(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}

func insertEdge(ctx context.Context, q execer, src, kind, key, dst, linkContext string) error {
	var d any
	resolved := 0
	if dst != "" {
		d, resolved = dst, 1
	}
	// A link written twice in a note is one edge of each kind, with the
	// context of its first occurrence.
	_, err := q.ExecContext(ctx, `INSERT OR IGNORE INTO edges(src, dst, kind, target, target_name, resolved, context) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		src, d, kind, key, targetName(key), resolved, linkContext)
	if err != nil {
		return fmt.Errorf("insert edge: %w", err)
	}
	return nil
}

// resolvePending is the catch-up pass after a batch's notes are written:
// every link, resolved or not, whose name is a name or alias this batch
// added, changed or removed is resolved again against the whole table, so a
// note early in a batch can link to one indexed later, a shorter namesake
// takes over, and a deleted target falls back to the next candidate.
func (w *applier) resolvePending(ctx context.Context) error {
	type edge struct {
		rowid  int64
		target string
		dst    sql.NullString
	}
	var todo []edge
	for _, k := range slices.Sorted(maps.Keys(w.affected)) {
		es, err := queryAll(ctx, w.q, func(e *edge) []any { return []any{&e.rowid, &e.target, &e.dst} },
			`SELECT rowid, target, dst FROM edges WHERE target_name = ? AND kind != 'tag'`, k)
		if err != nil {
			return err
		}
		todo = append(todo, es...)
	}
	cache := map[string]string{}
	for _, e := range todo {
		dst, ok := cache[e.target]
		if !ok {
			var err error
			if dst, err = resolve(ctx, w.q, e.target); err != nil {
				return err
			}
			cache[e.target] = dst
		}
		if dst == e.dst.String {
			continue
		}
		for _, id := range []string{dst, e.dst.String} {
			if id != "" {
				w.linked[id] = true
			}
		}
		var d any
		resolved := 0
		if dst != "" {
			d, resolved = dst, 1
		}
		if _, err := w.q.ExecContext(ctx, `UPDATE edges SET dst = ?, resolved = ? WHERE rowid = ?`, d, resolved, e.rowid); err != nil {
			return err
		}
	}
	return nil
}

// noteName is the lower-cased basename without its .md extension: what a bare
// [[wikilink]] names.
func noteName(vaultPath string) string {
	base := path.Base(vaultPath)
	if ext := path.Ext(base); strings.EqualFold(ext, ".md") {
		base = base[:len(base)-len(ext)]
	}
	return strings.ToLower(base)
}
