package index

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"

	"github.com/vaultask/vaultask/index/vectorset"
	"github.com/vaultask/vaultask/vault"
)

// setFactor sizes the candidates SearchVector rescores: this many times k
// of the vector set's nearest (see the recall benchmark in devtools/bench).
const setFactor = 2

// SearchVector returns the k chunks nearest q by cosine distance, as
// SearchVectorExact does, by way of the vector set: the 2k nearest by the
// quantised vectors, in scope, rescored exactly. Until the set is read (see
// currentSet) it is SearchVectorExact. A query of another space than the
// index's is refused.
func (s *Search) SearchVector(ctx context.Context, q vault.QueryVector, k int, scope vault.Scope) ([]vault.Chunk, error) {
	const what = "vector search"
	if k <= 0 {
		return nil, nil
	}
	space, err := s.db.checkQuery(ctx, what, q)
	if err != nil {
		return nil, err
	}
	vs, err := s.db.currentSet(ctx, space)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if vs == nil {
		return s.db.searchExact(ctx, space, q, k, scope)
	}
	ids := vs.set.Nearest(q.Values, setFactor*k, scope.OpenOnly())
	if len(ids) == 0 {
		return nil, nil
	}
	var hits []vault.Chunk
	err = s.db.read(ctx, what, func(tx *sql.Tx) error {
		top, err := s.db.rescore(ctx, tx, space.id, q.Values, ids, k, scope)
		if err != nil {
			return err
		}
		hits, err = readHits(ctx, s.db.prepared.in(tx), top, scope)
		return err
	})
	return hits, err
}

// scored is a chunk and its exact distance to a query.
type scored struct {
	id       int64
	distance float64
}

// rescore returns the k of the candidates ids nearest vec by their exact
// cosine distance (vectorset.CosineDistance, sqlite-vec's arithmetic),
// nearest first, ties by chunk id, in scope: the vectors and the chunks'
// sensitivity read in tx's snapshot, so a candidate the set holds but the
// snapshot no longer does (deleted, or made personal, by a commit the set
// has seen and the snapshot has not) is never kept.
func (s *Store) rescore(ctx context.Context, tx *sql.Tx, space int64, vec []float32, ids []int64, k int, scope vault.Scope) ([]scored, error) {
	rows, err := s.prepared.in(tx).QueryContext(ctx, rescoreSQL, idList(ids), space, scope.OpenOnly())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]scored, 0, len(ids))
	for rows.Next() {
		var c scored
		var blob sql.RawBytes
		if err := rows.Scan(&c.id, &blob); err != nil {
			return nil, err
		}
		if c.distance, err = distance(c.id, blob, vec); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sortScored(out)
	return out[:min(k, len(out))], nil
}

func sortScored(s []scored) { slices.SortFunc(s, compareScored) }

func compareScored(a, b scored) int {
	return cmp.Or(cmp.Compare(a.distance, b.distance), cmp.Compare(a.id, b.id))
}

// distance is the exact cosine distance of the stored vector blob of chunk
// id to vec.
func distance(id int64, blob []byte, vec []float32) (float64, error) {
	if len(blob) != 4*len(vec) {
		return 0, fmt.Errorf("the vector of chunk %d: %d bytes, want %d", id, len(blob), 4*len(vec))
	}
	return vectorset.CosineDistanceBytes(blob, vec), nil
}

// rescoreSQL reads the vectors of the candidates ?1 (a JSON array of chunk
// ids) in space ?2 under scope ?3 (1: open only), the scope checked through
// chunks_scope, not the chunk's row. CROSS JOIN keeps the candidates the
// outer loop, so each vector is looked up by its key: no scan.
const rescoreSQL = `SELECT v.chunk, v.embedding
	FROM json_each(?1) cand CROSS JOIN vectors v ON v.space = ?2 AND v.chunk = cand.value
	CROSS JOIN chunks c INDEXED BY chunks_scope ON c.rowid = cand.value
	WHERE ?3 = 0 OR c.sensitivity = 'open'`

// readHits reads the chunks of top with their notes, in top's order, each
// with its distance as its score, the scope checked again.
func readHits(ctx context.Context, q rowQuerier, top []scored, scope vault.Scope) ([]vault.Chunk, error) {
	if len(top) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(top))
	for i, t := range top {
		ids[i] = t.id
	}
	hits, err := queryAll(ctx, q, hitFields, hitsSQL, idList(ids), scope.OpenOnly())
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]vault.Chunk, len(hits))
	for _, h := range hits {
		byID[h.RowID] = h
	}
	out := make([]vault.Chunk, 0, len(top))
	for _, t := range top {
		if h, ok := byID[t.id]; ok {
			h.Score = t.distance
			out = append(out, h)
		}
	}
	return out, nil
}

// hitsSQL reads the chunks ?1 (a JSON array of chunk ids) that scope ?2
// (1: open only) may see, with their notes.
const hitsSQL = `SELECT ` + hitColumns + `, 0.0 FROM json_each(?1) t CROSS JOIN chunks c ON c.rowid = t.value
	JOIN docs d ON d.doc_id = c.doc_id
	WHERE ?2 = 0 OR c.sensitivity = 'open'`

// nearestHitsSQL is hitsSQL in doc_id order.
const nearestHitsSQL = hitsSQL + ` ORDER BY c.doc_id`

// SearchVectorExact returns the k chunks nearest q by cosine distance,
// nearest first, ties by chunk id, by brute force over every vector of the
// index's space in scope: the reference SearchVector's set is measured
// against, and its search while the set is read. Under ScopeAll it reads
// the vectors alone; the chunks it keeps are read with their scope
// (readHits).
func (s *Search) SearchVectorExact(ctx context.Context, q vault.QueryVector, k int, scope vault.Scope) ([]vault.Chunk, error) {
	if k <= 0 {
		return nil, nil
	}
	space, err := s.db.checkQuery(ctx, "vector search", q)
	if err != nil {
		return nil, err
	}
	return s.db.searchExact(ctx, space, q, k, scope)
}

// searchExact is SearchVectorExact in space, the query checked.
func (s *Store) searchExact(ctx context.Context, space spaceRef, q vault.QueryVector, k int, scope vault.Scope) ([]vault.Chunk, error) {
	var hits []vault.Chunk
	err := s.read(ctx, "vector search", func(tx *sql.Tx) error {
		query := `SELECT chunk, embedding FROM vectors WHERE space = ?`
		if scope.OpenOnly() {
			query = `SELECT v.chunk, v.embedding FROM vectors v
				CROSS JOIN chunks c INDEXED BY chunks_scope ON c.rowid = v.chunk
				WHERE v.space = ? AND c.sensitivity = 'open'`
		}
		rows, err := tx.QueryContext(ctx, query, space.id)
		if err != nil {
			return err
		}
		defer rows.Close()
		top := make([]scored, 0, k+1) // the k nearest so far, in order
		for rows.Next() {
			var c scored
			var blob sql.RawBytes
			if err := rows.Scan(&c.id, &blob); err != nil {
				return err
			}
			if c.distance, err = distance(c.id, blob, q.Values); err != nil {
				return err
			}
			if len(top) == k && compareScored(c, top[k-1]) >= 0 {
				continue
			}
			i, _ := slices.BinarySearchFunc(top, c, compareScored)
			top = slices.Insert(top, i, c)[:min(len(top)+1, k)]
		}
		if err := rows.Err(); err != nil {
			return err
		}
		hits, err = readHits(ctx, tx, top, scope)
		return err
	})
	return hits, err
}

// DistanceBounds bounds, for notes of docIDs, the cosine distance of the
// chunk NearestChunks would choose for q under scope, from the vector
// set's int8 copies of the vectors instead of the vectors, and its own list
// of each note's chunks with a vector: graph expansion reads exactly only
// the notes that may be among the nearest it keeps, and lists no chunk for
// that. Only the chunks the set holds as open are bounded under ScopeOpen,
// so a personal chunk never moves an open note's bounds.
//
// A note is left out when it cannot be bounded: the set holds no vector of
// a chunk of it in scope (it has none yet, or none scope may see), or one
// unusable; or the set is still being read. Nothing is bounded without a
// query vector or with one that is zero or not finite (vectorset.Bounds
// says how the bounds are made).
//
// The set follows each write once it commits, so a reader's snapshot may
// be a write ahead of it or behind it: a note's distance in the snapshot
// may then be out of its bounds, and expansion keeps other notes than a
// read of one state would. It never keeps a note or a chunk scope may not
// see: NearestChunks reads the snapshot, under the scope.
func (s *Search) DistanceBounds(ctx context.Context, docIDs []string, q vault.QueryVector, scope vault.Scope) (map[string]vault.DistanceBounds, error) {
	if len(docIDs) == 0 || q.Values == nil {
		return nil, nil
	}
	space, err := s.db.checkQuery(ctx, "distance bounds", q)
	if err != nil {
		return nil, err
	}
	if n := vectorset.Norm(q.Values); n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return nil, nil
	}
	vs, err := s.db.currentSet(ctx, space)
	if err != nil || vs == nil {
		return nil, err
	}
	bounds := vs.set.Bounds(q.Values, docIDs, scope.OpenOnly())
	out := make(map[string]vault.DistanceBounds, len(bounds))
	for doc, b := range bounds {
		out[doc] = vault.DistanceBounds{Lo: b.Lo, Hi: b.Hi}
	}
	return out, nil
}

// NearestChunks returns, of each note of docIDs that scope may see, its
// chunk nearest q by cosine distance, the first of them in document order
// on a tie; its first chunk when q has no vector or none of its chunks has
// a vector yet. The chunks come in doc_id order, their Score 0, with the
// distances of those that have one. It is what graph expansion reads of
// the notes it reaches: one chunk each, however many a note has.
func (s *Search) NearestChunks(ctx context.Context, docIDs []string, q vault.QueryVector, scope vault.Scope) ([]vault.Chunk, map[int64]float64, error) {
	const what = "nearest chunks"
	if len(docIDs) == 0 {
		return nil, nil, nil
	}
	var space spaceRef
	if q.Values != nil {
		var err error
		if space, err = s.db.checkQuery(ctx, what, q); err != nil {
			return nil, nil, err
		}
	}
	var chunks []vault.Chunk
	dist := map[int64]float64{}
	err := s.db.read(ctx, what, func(tx *sql.Tx) error {
		chosen, err := s.db.nearestOfEach(ctx, tx, docIDs, space.id, q.Values, scope)
		if err != nil {
			return err
		}
		ids := make([]int64, len(chosen))
		for i, c := range chosen {
			ids[i] = c.id
			if c.hasVector {
				dist[c.id] = c.distance
			}
		}
		chunks, err = queryAll(ctx, s.db.prepared.in(tx), hitFields, nearestHitsSQL, idList(ids), scope.OpenOnly())
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return chunks, dist, nil
}

// candidate is a chunk of a note NearestChunks reads.
type candidate struct {
	id        int64
	doc       string
	ordinal   int
	hasVector bool
	distance  float64
}

// nearer orders a note's chunks as NearestChunks chooses among them: those
// with a vector first, by distance, then by their place in the note.
func nearer(a, b candidate) bool {
	if a.hasVector != b.hasVector {
		return a.hasVector
	}
	if a.hasVector && a.distance != b.distance {
		return a.distance < b.distance
	}
	return a.ordinal < b.ordinal
}

// nearestOfEach returns each note's chunk nearest vec (nil: the first
// chunk) among those scope may see, with its distance in space when it has
// a vector, in tx's snapshot.
func (s *Store) nearestOfEach(ctx context.Context, tx *sql.Tx, docIDs []string, space int64, vec []float32, scope vault.Scope) ([]candidate, error) {
	query, args := nearestCandidatesSQL, []any{idList(docIDs), scope.OpenOnly(), space}
	if vec == nil {
		query, args = firstChunksSQL, args[:2]
	}
	rows, err := s.prepared.in(tx).QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	best := map[string]int{} // each note's place in out
	var out []candidate
	for rows.Next() {
		var c candidate
		var blob sql.RawBytes
		if err := rows.Scan(&c.id, &c.doc, &c.ordinal, &blob); err != nil {
			return nil, err
		}
		if blob != nil {
			if c.distance, err = distance(c.id, blob, vec); err != nil {
				return nil, err
			}
			c.hasVector = true
		}
		i, seen := best[c.doc]
		switch {
		case !seen:
			best[c.doc] = len(out)
			out = append(out, c)
		case nearer(c, out[i]):
			out[i] = c
		}
	}
	return out, rows.Err()
}

// nearestCandidatesSQL lists the chunks of the notes ?1 (a JSON list of
// doc_ids) that scope ?2 (1: open only) may see, with their vectors in
// space ?3 (NULL when a chunk has none): the scope applies to the note and
// to each chunk before the choice, read from chunks_doc, which covers it,
// not from the chunk's row, whose text comes first. Only the chosen
// chunks' rows are read after (hitsSQL).
const nearestCandidatesSQL = `SELECT c.rowid, c.doc_id, c.ordinal, v.embedding
	FROM docs d CROSS JOIN chunks c INDEXED BY chunks_doc ON c.doc_id = d.doc_id
	LEFT JOIN vectors v ON v.space = ?3 AND v.chunk = c.rowid
	WHERE d.doc_id IN (SELECT value FROM json_each(?1)) AND (?2 = 0 OR (d.sensitivity = 'open' AND c.sensitivity = 'open'))`

// firstChunksSQL is nearestCandidatesSQL without vectors: with no query
// vector each note's first chunk in scope is chosen.
const firstChunksSQL = `SELECT c.rowid, c.doc_id, c.ordinal, NULL
	FROM docs d CROSS JOIN chunks c INDEXED BY chunks_doc ON c.doc_id = d.doc_id
	WHERE d.doc_id IN (SELECT value FROM json_each(?1)) AND (?2 = 0 OR (d.sensitivity = 'open' AND c.sensitivity = 'open'))`
