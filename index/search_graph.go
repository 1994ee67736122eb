package index

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/vault"
)

const docColumns = `d.doc_id, d.path, d.title, d.content_hash, d.sensitivity`

// Docs returns the notes among docIDs that scope may see, in doc_id order.
func (s *Search) Docs(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Doc, error) {
	docs, err := readDocs(ctx, s.db.prepared, docIDs, scope)
	if err != nil {
		return nil, fmt.Errorf("read docs: %w", err)
	}
	return docs, nil
}

func readDocs(ctx context.Context, q rowQuerier, docIDs []string, scope vault.Scope) ([]vault.Doc, error) {
	if len(docIDs) == 0 {
		return nil, nil
	}
	return queryAll(ctx, q, docFields, `SELECT `+docColumns+` FROM docs d
		WHERE d.doc_id IN (SELECT value FROM json_each(?)) AND (? = 0 OR d.sensitivity = 'open')
		ORDER BY d.doc_id`, idList(docIDs), scope.OpenOnly())
}

// docFields points Scan at the docColumns of a Doc.
func docFields(d *vault.Doc) []any {
	return []any{&d.DocID, &d.Path, &d.Title, &d.ContentHash, &d.Sensitivity}
}

// Hops returns the hops Neighbours follows from each of docIDs, by doc id,
// without reading a note: graph expansion reads only the notes it may keep.
// Everything on the way is read under scope: with ScopeOpen a personal note
// is never a start, an end or the topic note a sibling is reached through,
// and a link whose target names a personal note is resolved again among
// open notes only, so the name of a personal note can neither hide nor
// reveal anything. Each note's hops come in a stable order: by relation,
// then the doc id reached, then the topic note a sibling is reached through.
func (s *Search) Hops(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Hop, error) {
	if len(docIDs) == 0 {
		return nil, nil
	}
	var hops []vault.Hop
	err := s.db.read(ctx, "hops", func(tx *sql.Tx) error {
		var err error
		hops, err = s.db.readHops(ctx, tx, docIDs, scope)
		return err
	})
	return hops, err
}

// readHops reads the hops from docIDs in tx's snapshot: every hop but the
// siblings in one statement (hopsSQL), then the members of the topic notes
// reached (topicMembersSQL), as remembered for the snapshot's graph version
// or read and remembered. The siblings are most of the hops (thousands
// when a topic note is big), so they are put in order as they are made:
// each topic's members come sorted.
func (s *Store) readHops(ctx context.Context, tx *sql.Tx, docIDs []string, scope vault.Scope) ([]vault.Hop, error) {
	q := s.prepared.in(tx)
	v, _, err := getMeta(ctx, q, graphVersionMeta)
	if err != nil {
		return nil, err
	}
	rows, err := queryAll(ctx, q, func(h *vault.Hop) []any { return []any{&h.From, &h.Relation, &h.To} },
		hopsSQL, idList(docIDs), scope.OpenOnly())
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rows, compareHops)
	var topics []string
	for _, h := range rows {
		if h.Relation == vault.RelationTopic && !slices.Contains(topics, h.To) {
			topics = append(topics, h.To)
		}
	}
	members, err := s.topicMembers(ctx, q, graphVersion(v), topics, scope)
	if err != nil {
		return nil, err
	}
	out := make([]vault.Hop, 0, len(rows))
	for len(rows) > 0 {
		from := rows[0].From
		n := 1
		for n < len(rows) && rows[n].From == from {
			n++
		}
		// A start's topics and members, its siblings, its links and
		// backlinks: the order of relationOrder.
		split := n
		for i, h := range rows[:n] {
			if relationOrder[h.Relation] > relationOrder[vault.RelationSibling] {
				split = i
				break
			}
		}
		for _, h := range rows[:split] {
			if h.To != from {
				out = append(out, h)
			}
		}
		first := len(out)
		for _, h := range rows[:split] {
			if h.Relation != vault.RelationTopic {
				continue
			}
			for _, m := range members[h.To] {
				if m != from {
					out = append(out, vault.Hop{From: from, Relation: vault.RelationSibling, Via: h.To, To: m})
				}
			}
		}
		if first < len(out) && out[first].Via != out[len(out)-1].Via {
			slices.SortFunc(out[first:], compareHops) // siblings through several topic notes
		}
		out = append(out, rows[split:n]...)
		rows = rows[n:]
	}
	return out, nil
}

// compareHops orders hops by start, relation (relationOrder), the note
// reached and the topic note a sibling is reached through.
func compareHops(a, b vault.Hop) int {
	return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(relationOrder[a.Relation], relationOrder[b.Relation]),
		cmp.Compare(a.To, b.To), cmp.Compare(a.Via, b.Via))
}

// topicMembers returns the members of each of topics under scope at the
// graph version of q's snapshot, sorted: those s.members remembers, the
// others read in q's snapshot and remembered.
func (s *Store) topicMembers(ctx context.Context, q rowQuerier, version int64, topics []string, scope vault.Scope) (map[string][]string, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	found, missing := s.members.lookup(version, topics, scope.OpenOnly())
	if len(missing) == 0 {
		return found, nil
	}
	type row struct{ topic, member string }
	rows, err := queryAll(ctx, q, func(r *row) []any { return []any{&r.topic, &r.member} },
		topicMembersSQL, idList(missing), scope.OpenOnly())
	if err != nil {
		return nil, fmt.Errorf("topic members: %w", err)
	}
	read := make(map[string][]string, len(missing))
	for _, t := range missing {
		read[t] = []string{} // a topic note that clips no note in scope is remembered too
	}
	for _, r := range rows {
		read[r.topic] = append(read[r.topic], r.member)
	}
	for _, m := range read {
		slices.Sort(m)
	}
	s.members.store(version, read, scope.OpenOnly())
	for t, m := range read {
		found[t] = m
	}
	return found, nil
}

// hopsSQL reads the hops from ?1 (a JSON list of doc_ids) under scope ?2
// (1: open only) but the siblings, as (start, relation, end) rows: each CTE
// is one step of the walk, every read under the scope before it goes on,
// and each hop's end checked on the way, so no note is read at the end.
// The siblings, a topic note's members, are read apart (topicMembersSQL) by
// the rule of a hop out of a note; so a topic note that clips itself is its
// own topic row here, a start of the sibling hop but no hop.
//
// A link's destination is the one the index resolved, but under ScopeOpen a
// link resolved to a personal note is resolved again among open notes
// (resolveSQL): out of a note, by its own target; into a start, the links
// whose target names a start (a name or an alias) and that resolve to it
// among open notes. The end of a hop out of a note is a note that exists
// and that scope may see: the one resolved, checked on its row, or the one
// resolved again among open notes. A topic note is one of visible_topics and
// a linking note is checked on its row.
var hopsSQL = `WITH
	starts(id) AS MATERIALIZED (
		SELECT d.doc_id FROM docs d
		WHERE d.doc_id IN (SELECT value FROM json_each(?1)) AND (?2 = 0 OR d.sensitivity = 'open')),
	incoming(src, dst, kind) AS MATERIALIZED (
		SELECT e.src, e.dst, e.kind FROM edges e
		WHERE e.dst IN (SELECT id FROM starts) AND e.kind IN ('` + markdown.KindTopic + `', '` + markdown.KindWikilink + `')
		UNION ALL
		-- kind != 'tag' lets the lookup by name use edges_target_name.
		SELECT src, dst, kind FROM (
			SELECT e.src, ` + resolveSQL("e.target", "e.target_name", "1") + ` AS dst, e.kind
			FROM edges e JOIN docs t ON t.doc_id = e.dst
			WHERE ?2 = 1 AND e.kind != 'tag' AND e.kind IN ('` + markdown.KindTopic + `', '` + markdown.KindWikilink + `') AND t.sensitivity != 'open' AND e.target_name IN (
				SELECT d.name FROM docs d WHERE d.doc_id IN (SELECT id FROM starts)
				UNION SELECT a.alias FROM aliases a WHERE a.doc_id IN (SELECT id FROM starts)))
		WHERE dst IN (SELECT id FROM starts)),
	topics(topic, start) AS MATERIALIZED (
		SELECT src, dst FROM incoming WHERE kind = '` + markdown.KindTopic + `'),
	-- A topic note is a neighbour, and a start of the sibling hop, only if
	-- scope may see it.
	visible_topics(id) AS MATERIALIZED (
		SELECT DISTINCT t.topic FROM topics t JOIN docs d ON d.doc_id = t.topic
		WHERE ?2 = 0 OR d.sensitivity = 'open'),
	sources(id, kind) AS MATERIALIZED (
		SELECT id, '` + markdown.KindTopic + `' FROM starts
		UNION SELECT id, '` + markdown.KindWikilink + `' FROM starts),
	outgoing(src, dst, kind) AS MATERIALIZED (
		SELECT src, dst, kind FROM (
			SELECT e.src, CASE WHEN ?2 = 0 OR t.sensitivity = 'open' THEN e.dst ELSE ` + resolveSQL("e.target", "e.target_name", "1") + ` END AS dst, e.kind
			FROM sources s CROSS JOIN edges e ON e.src = s.id AND e.kind = s.kind JOIN docs t ON t.doc_id = e.dst)
		WHERE dst IS NOT NULL),
	steps(start, dst, rel) AS (
		SELECT t.start, t.topic, '` + string(vault.RelationTopic) + `' FROM topics t
		JOIN visible_topics v ON v.id = t.topic
		UNION ALL
		SELECT o.src, o.dst, CASE o.kind WHEN '` + markdown.KindTopic + `' THEN '` + string(vault.RelationMember) + `' ELSE '` + string(vault.RelationLink) + `' END
		FROM outgoing o
		UNION ALL
		SELECT i.dst, i.src, '` + string(vault.RelationBacklink) + `' FROM incoming i JOIN docs d ON d.doc_id = i.src
		WHERE i.kind = '` + markdown.KindWikilink + `' AND (?2 = 0 OR d.sensitivity = 'open'))
	SELECT DISTINCT start, rel, dst FROM steps WHERE dst != start OR rel = '` + string(vault.RelationTopic) + `'`

// relationOrder orders a note's neighbours by relation.
var relationOrder = map[vault.Relation]int{vault.RelationTopic: 0, vault.RelationMember: 1, vault.RelationSibling: 2, vault.RelationLink: 3, vault.RelationBacklink: 4}

// ResolveLinks resolves wikilink texts as written between [[ and ]]
// ("Folder/Note#Heading|shown text") to the notes scope may see, by
// Obsidian's rules as Apply resolves links. Under ScopeOpen a personal note
// is never a candidate, so a link to one resolves to an open namesake or to
// nothing. Texts that resolve to no note are absent from the map.
func (s *Search) ResolveLinks(ctx context.Context, links []string, scope vault.Scope) (map[string]vault.Doc, error) {
	out := map[string]vault.Doc{}
	err := s.db.read(ctx, "resolve links", func(tx *sql.Tx) error {
		ids := map[string]string{}
		for _, l := range links {
			key := vault.LinkKey(l)
			if key == "" {
				continue
			}
			id, err := resolveIn(ctx, tx, key, scope)
			if err != nil {
				return err
			}
			if id != "" {
				ids[l] = id
			}
		}
		docs, err := readDocs(ctx, tx, slices.Sorted(maps.Values(ids)), scope)
		if err != nil {
			return err
		}
		byID := map[string]vault.Doc{}
		for _, d := range docs {
			byID[d.DocID] = d
		}
		for l, id := range ids {
			if d, ok := byID[id]; ok {
				out[l] = d
			}
		}
		return nil
	})
	return out, err
}
