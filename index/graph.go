package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/vault"
)

const docColumns = `d.doc_id, d.path, d.title, d.content_hash, d.sensitivity`

// idList passes a set of ids as one JSON parameter, read with json_each, so
// a query takes any number of them.
func idList[T any](ids []T) string {
	b, _ := json.Marshal(ids) // strings and integers always marshal
	return string(b)
}

// Docs returns the notes among docIDs that scope may see, in doc_id order.
func (s *Store) Docs(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Doc, error) {
	docs, err := readDocs(ctx, s.reader, docIDs, scope)
	if err != nil {
		return nil, fmt.Errorf("read docs: %w", err)
	}
	return docs, nil
}

type rowQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
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

// NoteChunks returns the chunks of docIDs that scope may see, each note's in
// document order. Their Score is 0.
func (s *Store) NoteChunks(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Chunk, error) {
	if len(docIDs) == 0 {
		return nil, nil
	}
	hits, err := queryAll(ctx, s.reader, hitFields, `SELECT `+hitColumns+`, 0.0 FROM chunks c JOIN docs d ON d.doc_id = c.doc_id
		WHERE c.doc_id IN (SELECT value FROM json_each(?)) AND (? = 0 OR c.sensitivity = 'open')
		ORDER BY c.doc_id, c.ordinal`, idList(docIDs), scope.OpenOnly())
	if err != nil {
		return nil, fmt.Errorf("note chunks: %w", err)
	}
	return hits, nil
}

// Distances returns the cosine distance from vec to each chunk of rowIDs
// that scope may see and that has a vector; chunks still on the embedding
// backlog are absent from the map.
func (s *Store) Distances(ctx context.Context, vec []float32, rowIDs []int64, scope vault.Scope) (map[int64]float64, error) {
	if len(rowIDs) == 0 {
		return nil, nil
	}
	if len(vec) != s.space.Dim {
		return nil, fmt.Errorf("distances: query has %d dimensions, the index holds %d", len(vec), s.space.Dim)
	}
	blob, err := sqlite_vec.SerializeFloat32(vec)
	if err != nil {
		return nil, err
	}
	// The join looks each vector up by rowid: no scan of chunks_vec.
	type distance struct {
		id int64
		d  float64
	}
	ds, err := queryAll(ctx, s.reader, func(x *distance) []any { return []any{&x.id, &x.d} }, `SELECT c.rowid, vec_distance_cosine(v.embedding, ?)
		FROM chunks c JOIN chunks_vec v ON v.rowid = c.rowid
		WHERE c.rowid IN (SELECT value FROM json_each(?)) AND (? = 0 OR c.sensitivity = 'open')`,
		blob, idList(rowIDs), scope.OpenOnly())
	if err != nil {
		return nil, fmt.Errorf("distances: %w", err)
	}
	out := make(map[int64]float64, len(ds))
	for _, x := range ds {
		out[x.id] = x.d
	}
	return out, nil
}

// Neighbours returns the notes one hop from each of docIDs: its topic notes,
// the notes it clips when it is a topic note (members), the other notes its
// topic notes clip (siblings), the notes it links to and the notes that link
// to it. Everything on the way is read under scope:
// with ScopeOpen a personal note is never a start, an end or the topic note
// a sibling is reached through, and a link whose target names a personal
// note is resolved again among open notes only, so the name of a personal
// note can neither hide nor reveal anything. Each note's neighbours come in
// a stable order: by relation, then path.
func (s *Store) Neighbours(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Neighbour, error) {
	var out []vault.Neighbour
	err := s.read(ctx, "neighbours", func(tx *sql.Tx) error {
		var err error
		out, err = graphReader{q: tx, scope: scope}.neighbours(ctx, docIDs)
		return err
	})
	return out, err
}

// graphReader reads the link graph as scope sees it.
type graphReader struct {
	q     rowQuerier
	scope vault.Scope
}

// edge is a link from src to dst under the reader's scope.
type edge struct{ src, dst string }

func edgeFields(e *edge) []any { return []any{&e.src, &e.dst} }

// step is one neighbour found: to, one hop from from (through via for a
// sibling).
type step struct {
	from, via, to string
	rel           vault.Relation
}

func (g graphReader) neighbours(ctx context.Context, docIDs []string) ([]vault.Neighbour, error) {
	starts, err := readDocs(ctx, g.q, docIDs, g.scope)
	if err != nil || len(starts) == 0 {
		return nil, err
	}
	ids := docIDsOf(starts)
	steps, err := g.topicSteps(ctx, ids)
	if err != nil {
		return nil, err
	}
	links, err := g.linkSteps(ctx, ids)
	if err != nil {
		return nil, err
	}
	out, err := g.visible(ctx, append(steps, links...))
	if err != nil {
		return nil, err
	}
	sortNeighbours(out)
	return out, nil
}

// topicSteps are the topic notes of ids, the members of those of ids that
// are topic notes, and the siblings: the other members of their topic
// notes that scope may see.
func (g graphReader) topicSteps(ctx context.Context, ids []string) ([]step, error) {
	var all []step
	topics, err := g.incoming(ctx, ids, markdown.KindTopic)
	if err != nil {
		return nil, err
	}
	topicIDs := map[string]bool{}
	for _, e := range topics {
		all = append(all, step{from: e.dst, to: e.src, rel: vault.RelationTopic})
		topicIDs[e.src] = true
	}
	// A topic note is a start of the sibling hop only if scope may see it.
	visibleTopics, err := readDocs(ctx, g.q, slices.Sorted(maps.Keys(topicIDs)), g.scope)
	if err != nil {
		return nil, err
	}
	clipped, err := g.outgoing(ctx, docIDsOf(visibleTopics), markdown.KindTopic)
	if err != nil {
		return nil, err
	}
	clips := map[string][]string{}
	for _, e := range clipped {
		clips[e.src] = append(clips[e.src], e.dst)
	}
	members, err := g.outgoing(ctx, ids, markdown.KindTopic)
	if err != nil {
		return nil, err
	}
	for _, e := range members {
		all = append(all, step{from: e.src, to: e.dst, rel: vault.RelationMember})
	}
	for _, e := range topics {
		for _, m := range clips[e.src] {
			if m != e.dst {
				all = append(all, step{from: e.dst, via: e.src, to: m, rel: vault.RelationSibling})
			}
		}
	}
	return all, nil
}

// linkSteps are the notes ids link to and the notes that link to them.
func (g graphReader) linkSteps(ctx context.Context, ids []string) ([]step, error) {
	links, err := g.outgoing(ctx, ids, markdown.KindWikilink)
	if err != nil {
		return nil, err
	}
	backlinks, err := g.incoming(ctx, ids, markdown.KindWikilink)
	if err != nil {
		return nil, err
	}
	all := make([]step, 0, len(links)+len(backlinks))
	for _, e := range links {
		all = append(all, step{from: e.src, to: e.dst, rel: vault.RelationLink})
	}
	for _, e := range backlinks {
		all = append(all, step{from: e.dst, to: e.src, rel: vault.RelationBacklink})
	}
	return all, nil
}

// visible turns steps into neighbours, once each, keeping those whose end
// scope may see and that do not lead back to their start.
func (g graphReader) visible(ctx context.Context, steps []step) ([]vault.Neighbour, error) {
	targets := map[string]bool{}
	for _, s := range steps {
		targets[s.to] = true
	}
	docs, err := readDocs(ctx, g.q, slices.Sorted(maps.Keys(targets)), g.scope)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]vault.Doc, len(docs))
	for _, d := range docs {
		byID[d.DocID] = d
	}
	seen := map[step]bool{}
	var out []vault.Neighbour
	for _, s := range steps {
		d, ok := byID[s.to]
		if !ok || s.to == s.from || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, vault.Neighbour{From: s.from, Relation: s.rel, Via: s.via, Doc: d})
	}
	return out, nil
}

// sortNeighbours orders each start's neighbours by relation, then path.
func sortNeighbours(out []vault.Neighbour) {
	order := map[vault.Relation]int{vault.RelationTopic: 0, vault.RelationMember: 1, vault.RelationSibling: 2, vault.RelationLink: 3, vault.RelationBacklink: 4}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.Relation != b.Relation {
			return order[a.Relation] < order[b.Relation]
		}
		if a.Doc.Path != b.Doc.Path {
			return a.Doc.Path < b.Doc.Path
		}
		return a.Via < b.Via
	})
}

// outgoing returns the resolved edges of kind out of srcs, each destination
// as scope resolves it.
func (g graphReader) outgoing(ctx context.Context, srcs []string, kind string) ([]edge, error) {
	if len(srcs) == 0 {
		return nil, nil
	}
	type row struct{ src, dst, target, sens string }
	raw, err := queryAll(ctx, g.q, func(r *row) []any { return []any{&r.src, &r.dst, &r.target, &r.sens} }, `SELECT e.src, e.dst, e.target, t.sensitivity
		FROM edges e JOIN docs t ON t.doc_id = e.dst
		WHERE e.src IN (SELECT value FROM json_each(?)) AND e.kind = ?
		ORDER BY e.src, e.target`, idList(srcs), kind)
	if err != nil {
		return nil, err
	}
	var out []edge
	for _, r := range raw {
		dst := r.dst
		if g.scope.OpenOnly() && r.sens != vault.SensitivityOpen {
			if dst, err = resolveIn(ctx, g.q, r.target, g.scope); err != nil {
				return nil, err
			}
		}
		if dst != "" {
			out = append(out, edge{r.src, dst})
		}
	}
	return out, nil
}

// incoming returns the edges of kind whose destination, as scope resolves
// it, is one of dsts. Under ScopeOpen that includes a link the index
// resolved to a personal namesake but that names one of dsts among open notes.
func (g graphReader) incoming(ctx context.Context, dsts []string, kind string) ([]edge, error) {
	if len(dsts) == 0 {
		return nil, nil
	}
	out, err := queryAll(ctx, g.q, edgeFields, `SELECT e.src, e.dst FROM edges e
		WHERE e.dst IN (SELECT value FROM json_each(?)) AND e.kind = ?
		ORDER BY e.dst, e.src`, idList(dsts), kind)
	if err != nil {
		return nil, err
	}
	if !g.scope.OpenOnly() {
		return out, nil
	}
	// Links whose target could name one of dsts but that the index resolved
	// to a personal note: resolve them again among open notes.
	type shadowed struct{ src, target string }
	redo, err := queryAll(ctx, g.q, func(r *shadowed) []any { return []any{&r.src, &r.target} }, `SELECT e.src, e.target FROM edges e JOIN docs t ON t.doc_id = e.dst
		WHERE e.kind = ? AND t.sensitivity != 'open' AND e.target_name IN (
			SELECT d.name FROM docs d WHERE d.doc_id IN (SELECT value FROM json_each(?))
			UNION SELECT a.alias FROM aliases a WHERE a.doc_id IN (SELECT value FROM json_each(?)))
		ORDER BY e.src, e.target`, kind, idList(dsts), idList(dsts))
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, d := range dsts {
		want[d] = true
	}
	for _, r := range redo {
		dst, err := resolveIn(ctx, g.q, r.target, g.scope)
		if err != nil {
			return nil, err
		}
		if want[dst] {
			out = append(out, edge{r.src, dst})
		}
	}
	return out, nil
}

func docIDsOf(docs []vault.Doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.DocID
	}
	return out
}
