package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/vaultask/vaultask/index/vectorset"
	"github.com/vaultask/vaultask/internal/routine"
)

// vectorSet is the vectors of one embedding space in memory: an int8 copy
// of every vector with its chunk's note and whether the chunk is open
// (index/vectorset). SearchVector scans it whole, keeping only open chunks
// when the scope says so, and rescores its nearest candidates exactly on
// their float vectors in the file; DistanceBounds reads a note's vectors
// through it.
type vectorSet struct {
	space int64
	set   *vectorset.Set
	// version is the vectors' version (vectorsVersionMeta) the set was read
	// at: a read-only store, which sees another process's writes but not
	// their changes, reads it again when the index's differs.
	version string
}

// vectorSets holds the set of each embedding space a search has asked
// for, read in the background the first time (see Store.currentSet): a
// process that never searches by vector never holds one.
type vectorSets struct {
	// loaded maps a space's id to its set. It is replaced whole, never
	// changed, so searches read it without a lock.
	loaded atomic.Pointer[map[int64]*vectorSet]

	mu      sync.Mutex // guards reading and the replacing of loaded
	reading map[int64]*routine.Routine
}

// get returns the set of space, nil when none is read.
func (v *vectorSets) get(space int64) *vectorSet {
	if m := v.loaded.Load(); m != nil {
		return (*m)[space]
	}
	return nil
}

// any says whether a set of any space is in memory.
func (v *vectorSets) any() bool {
	m := v.loaded.Load()
	return m != nil && len(*m) > 0
}

// put makes vs its space's set. The caller holds v.mu.
func (v *vectorSets) put(vs *vectorSet) {
	next := map[int64]*vectorSet{}
	if m := v.loaded.Load(); m != nil {
		for k, s := range *m {
			next[k] = s
		}
	}
	next[vs.space] = vs
	v.loaded.Store(&next)
}

// keepOnly forgets the set of every space but space: a switch to a
// re-embedded space drops the old one's (the new one's was never read:
// nothing searches a space being filled).
func (v *vectorSets) keepOnly(space int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	next := map[int64]*vectorSet{}
	if m := v.loaded.Load(); m != nil {
		if vs, ok := (*m)[space]; ok {
			next[space] = vs
		}
	}
	v.loaded.Store(&next)
}

// vectorsCommitted replays a committed write's vector changes on the set of
// each space they are of, when it is in memory: the vector sets' hook.
func (s *Store) vectorsCommitted(w *writeTx) {
	if w.spaces != nil {
		s.sets.keepOnly(w.spaces.active.id)
	}
	if len(w.vectors) == 0 {
		return
	}
	m := s.sets.loaded.Load()
	if m == nil {
		return
	}
	for space, vs := range *m {
		var changes []vectorset.Change
		for _, c := range w.vectors {
			if c.space == space {
				changes = append(changes, c.Change)
			}
		}
		vs.set.Apply(changes)
	}
}

// currentSet returns the set of space if it is current, or nil while one
// is read in the background (the caller searches by brute force
// meanwhile): the first vector search starts that read, not Open. A
// read-only store's set is current while the index's vectors are at its
// version: it sees another process's writes but not their changes.
func (s *Store) currentSet(ctx context.Context, space spaceRef) (*vectorSet, error) {
	vs := s.sets.get(space.id)
	if vs != nil && s.writer != nil {
		return vs, nil
	}
	var version string
	if s.writer == nil {
		var err error
		if version, _, err = getMeta(ctx, s.reader, vectorsVersionMeta); err != nil {
			return nil, err
		}
		if vs != nil && vs.version == version {
			return vs, nil
		}
	}
	s.sets.mu.Lock()
	defer s.sets.mu.Unlock()
	if cur := s.sets.get(space.id); cur != vs && (s.writer != nil || cur.version == version) {
		return cur, nil // a read ended meanwhile
	}
	if r := s.sets.reading[space.id]; r != nil {
		select {
		case <-r.Done():
		default:
			return nil, nil // under way
		}
	}
	r := &routine.Routine{}
	if s.sets.reading == nil {
		s.sets.reading = map[int64]*routine.Routine{}
	}
	s.sets.reading[space.id] = r
	return nil, r.Start(context.WithoutCancel(ctx), func(ctx context.Context) error { return s.loadSet(ctx, space) })
}

// loadSet reads the set of space and makes it the store's. A writer's
// writes wait meanwhile (a second or two at 100k vectors): a change
// committed during the read would be in neither the snapshot nor the set.
// A failed read is logged; the next search starts another.
func (s *Store) loadSet(ctx context.Context, space spaceRef) error {
	if s.writer != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	vs, err := s.readSet(ctx, space)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("reading the vector set failed; vector search is by brute force until a read succeeds", keyErr, err)
		}
		return nil
	}
	s.sets.mu.Lock()
	s.sets.put(vs)
	s.sets.mu.Unlock()
	return nil
}

// WarmVectorSearch reads the vector set of the active space now, unless it
// is current, and waits for it: otherwise the first vector search starts
// that read and searches by brute force until it ends. `eval retrieval`
// and the benchmarks call it, so that every search they score or time goes
// through the set.
func (s *Search) WarmVectorSearch(ctx context.Context) error {
	active := s.db.spaces().active
	vs, err := s.db.currentSet(ctx, active)
	if err != nil || vs != nil {
		return err
	}
	s.db.sets.mu.Lock()
	r := s.db.sets.reading[active.id]
	s.db.sets.mu.Unlock()
	select {
	case <-r.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.db.sets.get(active.id) == nil {
		return errors.New("read the vector set: failed (the log says why)")
	}
	return nil
}

// closeSets stops the reads of sets under way.
func (s *Store) closeSets() error {
	s.sets.mu.Lock()
	var rs []*routine.Routine
	for _, r := range s.sets.reading {
		rs = append(rs, r)
	}
	s.sets.mu.Unlock()
	var err error
	for _, r := range rs {
		err = errors.Join(err, r.Close(context.Background()))
	}
	return err
}

// readSet reads every vector of space into a new set, and the version they
// are at, from one snapshot: the vectors in chunk order, each chunk's note
// and scope from chunks_doc alone (the chunks' rows hold their text first).
func (s *Store) readSet(ctx context.Context, space spaceRef) (*vectorSet, error) {
	vs := &vectorSet{space: space.id, set: vectorset.New(space.space.Dim)}
	err := s.read(ctx, "read vectors", func(tx *sql.Tx) error {
		var err error
		if vs.version, _, err = getMeta(ctx, tx, vectorsVersionMeta); err != nil {
			return err
		}
		chunks, err := chunkNotes(ctx, tx)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT chunk, embedding FROM vectors WHERE space = ? ORDER BY chunk`, space.id)
		if err != nil {
			return err
		}
		defer rows.Close()
		vec := make([]float32, space.space.Dim)
		for rows.Next() {
			var id int64
			var blob sql.RawBytes
			if err := rows.Scan(&id, &blob); err != nil {
				return err
			}
			if err := decodeVector(vec, blob); err != nil {
				return fmt.Errorf("the vector of chunk %d: %w", id, err)
			}
			// A vector without its chunk is never a hit: the rescore
			// reads the chunk.
			if c, ok := chunks[id]; ok {
				vs.set.Put(id, c.doc, vec, c.open)
			}
		}
		return rows.Err()
	})
	return vs, err
}

// chunkNote is a chunk's note and whether the chunk is open.
type chunkNote struct {
	doc  string
	open bool
}

// chunkNotes maps every chunk to its note and scope, from chunks_doc
// alone, each note's doc_id one string however many chunks it has.
func chunkNotes(ctx context.Context, tx *sql.Tx) (map[int64]chunkNote, error) {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, doc_id, sensitivity = 'open' FROM chunks INDEXED BY chunks_doc ORDER BY doc_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]chunkNote{}
	var doc string
	for rows.Next() {
		var id int64
		var d sql.RawBytes
		var open bool
		if err := rows.Scan(&id, &d, &open); err != nil {
			return nil, err
		}
		if string(d) != doc {
			doc = string(d)
		}
		out[id] = chunkNote{doc, open}
	}
	return out, rows.Err()
}
