package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"

	"github.com/vaultask/vaultask/index/vectorset"
	"github.com/vaultask/vaultask/internal/routine"
	"github.com/vaultask/vaultask/vault"
)

// shortlist is the vector set (index/vectorset) of chunks_vec: an int8
// copy of every vector with its chunk's note and whether the chunk is open.
// SearchVector scans it whole, keeping only open chunks when the scope says
// so, and rescores its nearest candidates exactly, on their float vectors
// in chunks_vec; DistanceBounds reads a note's vectors through it.
type shortlist struct {
	set *vectorset.Set
	// version is the vectors' version (see bumpVectorsVersion) the
	// shortlist was read at: a read-only store, which sees another
	// process's writes but not their changes, reads it again when the
	// index's differs.
	version string
}

// vectorsVersionMeta counts the commits that change chunks_vec, so that a
// read-only store knows when its shortlist is out of date.
const vectorsVersionMeta = "vectors_version"

// bumpVectorsVersion counts one more commit that changed chunks_vec.
func bumpVectorsVersion(ctx context.Context, e execer) error {
	return countMeta(ctx, e, vectorsVersionMeta)
}

// currentShortlist returns the shortlist if it is current, or nil while
// one is read in the background (the caller searches by brute force
// meanwhile): the first vector search starts that read, not Open, so a
// process that never searches by vector never holds it. A read-only store's
// shortlist is current while the index's vectors are at its version: it
// sees another process's writes but not their changes.
func (s *Store) currentShortlist(ctx context.Context) (*shortlist, error) {
	sl := s.short.Load()
	if sl != nil && s.writer != nil {
		return sl, nil
	}
	var version string
	if s.writer == nil {
		var err error
		if version, _, err = getMeta(ctx, s.reader, vectorsVersionMeta); err != nil {
			return nil, err
		}
		if sl != nil && sl.version == version {
			return sl, nil
		}
	}
	s.shortMu.Lock()
	defer s.shortMu.Unlock()
	if cur := s.short.Load(); cur != sl && (s.writer != nil || cur.version == version) {
		return cur, nil // a read ended meanwhile
	}
	if s.reading != nil {
		select {
		case <-s.reading.Done():
		default:
			return nil, nil // under way
		}
	}
	s.reading = &routine.Routine{}
	return nil, s.reading.Start(context.WithoutCancel(ctx), s.loadShortlist)
}

// loadShortlist reads the shortlist and makes it the store's. A writer's
// writes wait meanwhile (a second or two at 100k vectors): a change
// committed during the read would be in neither the snapshot nor the
// shortlist. A failed read is logged; the next search starts another.
func (s *Store) loadShortlist(ctx context.Context) error {
	if s.writer != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	sl, err := s.readShortlist(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("reading the vector shortlist failed; vector search is by brute force until a read succeeds", keyErr, err)
		}
		return nil
	}
	s.short.Store(sl)
	return nil
}

// WarmVectorSearch reads the vector shortlist now, unless it is current,
// and waits for it: otherwise the first vector search starts that read and
// searches by brute force until it ends. `eval retrieval` and the
// benchmarks call it, so that every search they score or time goes through
// the shortlist.
func (s *Store) WarmVectorSearch(ctx context.Context) error {
	sl, err := s.currentShortlist(ctx)
	if err != nil || sl != nil {
		return err
	}
	s.shortMu.Lock()
	r := s.reading
	s.shortMu.Unlock()
	select {
	case <-r.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.short.Load() == nil {
		return errors.New("read vector shortlist: failed (the log says why)")
	}
	return nil
}

// closeShortlist stops a read of the shortlist under way.
func (s *Store) closeShortlist() error {
	s.shortMu.Lock()
	r := s.reading
	s.shortMu.Unlock()
	if r == nil {
		return nil
	}
	return r.Close(context.Background())
}

// readShortlist reads every vector of chunks_vec into a new shortlist, and
// the version they are at, from one snapshot.
//
// It reads sqlite-vec's shadow tables, as its version 0.1 lays them out:
// each allocation chunk's vectors as one blob (_vector_chunks00), its
// sensitivity metadata as one blob of 16-byte entries (_metadatachunks00:
// an int32 length, then the text when it fits in 12 bytes), and each
// vector's place in them (_rowids). A scan of chunks_vec looks each vector
// up on its own instead, 3 s for 100k vectors where this takes a few
// hundred ms; chunks.sensitivity sits behind each chunk's text, as slow to
// read. TestShortlistFollowsWrites checks this reading against the vectors
// and sensitivities the writes put (an upgrade of sqlite-vec that changed
// its layout would fail it), and every search checks the scope again on
// chunks.
func (s *Store) readShortlist(ctx context.Context) (*shortlist, error) {
	sl := &shortlist{set: vectorset.New(s.space.Dim)}
	err := s.read(ctx, "read vectors", func(tx *sql.Tx) error {
		var err error
		if sl.version, _, err = getMeta(ctx, tx, vectorsVersionMeta); err != nil {
			return err
		}
		type place struct{ id, chunk, offset int64 }
		places, err := queryAll(ctx, tx, func(p *place) []any { return []any{&p.id, &p.chunk, &p.offset} },
			`SELECT rowid, chunk_id, chunk_offset FROM chunks_vec_rowids ORDER BY chunk_id`)
		if err != nil {
			return err
		}
		docOf, err := embeddedNotes(ctx, tx)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT v.rowid, v.vectors, m.data FROM chunks_vec_vector_chunks00 v
			JOIN chunks_vec_metadatachunks00 m ON m.rowid = v.rowid ORDER BY v.rowid`)
		if err != nil {
			return err
		}
		defer rows.Close()
		const entry = 16 // a text metadata entry
		size := int64(4 * s.space.Dim)
		vec := make([]float32, s.space.Dim)
		for rows.Next() && len(places) > 0 {
			var chunk int64
			var vectors, meta sql.RawBytes
			if err := rows.Scan(&chunk, &vectors, &meta); err != nil {
				return err
			}
			for ; len(places) > 0 && places[0].chunk == chunk; places = places[1:] {
				p := places[0]
				if p.offset < 0 || (p.offset+1)*size > int64(len(vectors)) || (p.offset+1)*entry > int64(len(meta)) {
					return fmt.Errorf("vector %d at %d of chunk %d, which holds %d bytes of vectors and %d of metadata", p.id, p.offset, chunk, len(vectors), len(meta))
				}
				if err := decodeVector(vec, vectors[p.offset*size:(p.offset+1)*size]); err != nil {
					return err
				}
				m := meta[p.offset*entry : (p.offset+1)*entry]
				open := binary.LittleEndian.Uint32(m) == uint32(len(vault.SensitivityOpen)) && string(m[4:4+len(vault.SensitivityOpen)]) == vault.SensitivityOpen
				// A vector without its chunk is never a hit: the
				// rescore reads the chunk.
				if doc, ok := docOf[p.id]; ok {
					sl.set.Put(p.id, doc, vec, open)
				}
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(places) > 0 {
			return fmt.Errorf("vector %d is in chunk %d, which is missing", places[0].id, places[0].chunk)
		}
		return nil
	})
	return sl, err
}

// embeddedNotes maps each chunk with a vector to its note, from chunks_doc
// alone (the chunks' rows hold their text first), each note's doc_id one
// string however many chunks it has.
func embeddedNotes(ctx context.Context, tx *sql.Tx) (map[int64]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, doc_id FROM chunks INDEXED BY chunks_doc WHERE embedded = 1 ORDER BY doc_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]string{}
	var doc string
	for rows.Next() {
		var id int64
		var d sql.RawBytes
		if err := rows.Scan(&id, &d); err != nil {
			return nil, err
		}
		if string(d) != doc {
			doc = string(d)
		}
		out[id] = doc
	}
	return out, rows.Err()
}

// decodeVector reads a float32 vector as sqlite-vec stores it (little-endian)
// into v.
func decodeVector(v []float32, blob []byte) error {
	if len(blob) != 4*len(v) {
		return fmt.Errorf("%d bytes, want %d", len(blob), 4*len(v))
	}
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
	}
	return nil
}

// SearchVector returns the k nearest chunks to vec by cosine distance, as
// SearchVectorExact does, by way of the shortlist: the 2k nearest by the
// quantised vectors, in scope, rescored exactly. Until the shortlist is
// read (see currentShortlist) it is SearchVectorExact.
func (s *Store) SearchVector(ctx context.Context, vec []float32, k int, scope vault.Scope) ([]vault.Chunk, error) {
	if k <= 0 {
		return nil, nil
	}
	if len(vec) != s.space.Dim {
		return nil, fmt.Errorf("vector search: query has %d dimensions, the index holds %d", len(vec), s.space.Dim)
	}
	sl, err := s.currentShortlist(ctx)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if sl == nil {
		return s.SearchVectorExact(ctx, vec, k, scope)
	}
	blob, err := sqlite_vec.SerializeFloat32(vec)
	if err != nil {
		return nil, err
	}
	hits, err := s.searchShortlist(ctx, sl, vec, blob, k, scope)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	return hits, nil
}

// shortlistFactor sizes the shortlist SearchVector rescores: this many
// times k candidates (see the recall benchmark in internal/bench).
const shortlistFactor = 2

// searchShortlist is SearchVector's search: the shortlist's nearest
// candidates, in scope, rescored by exact cosine distance on their float
// vectors, the k nearest kept. The rescore reads chunks_vec and chunks in
// the reader's snapshot and checks the scope again, so a candidate the
// shortlist holds but the snapshot no longer does (deleted, or made
// personal, by a commit the shortlist has seen and the snapshot has not)
// is never returned.
func (s *Store) searchShortlist(ctx context.Context, sl *shortlist, vec []float32, blob []byte, k int, scope vault.Scope) ([]vault.Chunk, error) {
	ids := sl.set.Nearest(vec, shortlistFactor*k, scope.OpenOnly())
	if len(ids) == 0 {
		return nil, nil
	}
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = strconv.FormatInt(id, 10)
	}
	return queryAll(ctx, s.prepared, hitFields, rescoreQuery, blob, "["+strings.Join(list, ",")+"]", scope.OpenOnly(), k)
}

// rescoreQuery is searchShortlist's rescore: the candidates (a JSON array
// of rowids) by exact distance to the query vector, the scope checked on
// chunks before the limit (through chunks_scope, not the chunk's row).
// CROSS JOIN keeps the candidates the outer loop, so each vector is looked
// up by rowid: no scan of chunks_vec.
const rescoreQuery = `WITH knn AS (
		SELECT v.rowid AS rowid, vec_distance_cosine(v.embedding, ?) AS distance
		FROM json_each(?) cand CROSS JOIN chunks_vec v ON v.rowid = cand.value
		CROSS JOIN chunks c INDEXED BY chunks_scope ON c.rowid = cand.value
		WHERE (? = 0 OR c.sensitivity = 'open')
		ORDER BY distance, v.rowid LIMIT ?)
	SELECT ` + hitColumns + `, knn.distance FROM knn JOIN chunks c ON c.rowid = knn.rowid JOIN docs d ON d.doc_id = c.doc_id
	ORDER BY knn.distance, knn.rowid`
