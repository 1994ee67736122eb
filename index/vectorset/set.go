package vectorset

import (
	"fmt"
	"slices"
	"sync"

	"github.com/vaultask/vaultask/internal/simd"
)

// Set is an int8 copy of one embedding space's vectors. Nearest scans it
// whole, a quarter of the bytes the float vectors take; Bounds reads a
// note's vectors by its note. It is safe for concurrent use: searches share
// it, a write's changes take it alone.
//
// Slots are packed: a dropped vector's slot takes the last slot's vector,
// so a scan never reads a hole. Rows live in fixed blocks, so growing never
// copies what is there.
type Set struct {
	dim int

	mu     sync.RWMutex
	blocks [][]int8 // blockRows·dim bytes each; only the last is partly used
	ids    []int64  // chunk id of each slot
	weight []float32
	scale  []float32 // each vector's quantisation scale: v[i] ≈ scale·row[i]
	norm   []float64 // each vector's Euclidean norm, from its float values
	open   []bool
	doc    []string         // the note of each slot's chunk
	slots  map[int64]int    // slot of each chunk id
	bydoc  map[string][]int // slots of each note's chunks
}

// blockRows is the vectors of one block of a set: 512 KB at 512
// dimensions, small enough that a block is the most growth ever wastes.
const blockRows = 1024

// New returns an empty set of vectors of dim dimensions.
func New(dim int) *Set {
	return &Set{dim: dim, slots: map[int64]int{}, bydoc: map[string][]int{}}
}

// Dim is the dimension of the set's vectors.
func (s *Set) Dim() int { return s.dim }

// Len is the number of vectors the set holds.
func (s *Set) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ids)
}

// Lookup reports whether the set holds a vector of chunk id, and its note
// and whether it is open.
func (s *Set) Lookup(id int64) (doc string, open, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	slot, ok := s.slots[id]
	if !ok {
		return "", false, false
	}
	return s.doc[slot], s.open[slot], true
}

// Change is one change a write makes to a space's vectors: the vector of
// chunk ID put (Vec set, of a chunk of note Doc), dropped, or its chunk's
// sensitivity changed (neither: Open says which).
type Change struct {
	ID      int64
	Doc     string
	Vec     []float32
	Dropped bool
	Open    bool
}

// Apply replays a committed write's changes, in order.
func (s *Set) Apply(changes []Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range changes {
		switch {
		case c.Vec != nil:
			s.put(c.ID, c.Doc, c.Vec, c.Open)
		case c.Dropped:
			s.drop(c.ID)
		default:
			if slot, ok := s.slots[c.ID]; ok {
				s.open[slot] = c.Open
			}
		}
	}
}

// Put stores v, of Dim dimensions, as the vector of chunk id of note doc,
// replacing the one it has.
func (s *Set) Put(id int64, doc string, v []float32, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(id, doc, v, open)
}

// row is slot's quantised vector.
func (s *Set) row(slot int) []int8 {
	off := (slot % blockRows) * s.dim
	return s.blocks[slot/blockRows][off : off+s.dim]
}

// weightOf is what a vector's int8 dot product is multiplied by to rank it
// by cosine similarity: its scale over its norm. The query's own scale and
// norm are the same for every vector, so they are left out.
func weightOf(scale float32, norm float64) float32 {
	if norm == 0 {
		return 0
	}
	return scale / float32(norm)
}

func (s *Set) put(id int64, doc string, v []float32, open bool) {
	if len(v) != s.dim {
		panic(fmt.Sprintf("vectorset: a vector of %d dimensions in a set of %d", len(v), s.dim))
	}
	slot, ok := s.slots[id]
	switch {
	case !ok:
		slot = len(s.ids)
		if slot%blockRows == 0 && slot/blockRows == len(s.blocks) {
			s.blocks = append(s.blocks, make([]int8, blockRows*s.dim))
		}
		s.ids = append(s.ids, id)
		s.weight = append(s.weight, 0)
		s.scale = append(s.scale, 0)
		s.norm = append(s.norm, 0)
		s.open = append(s.open, false)
		s.doc = append(s.doc, doc)
		s.slots[id] = slot
		s.bydoc[doc] = append(s.bydoc[doc], slot)
	case s.doc[slot] != doc:
		s.moveSlot(s.doc[slot], slot, -1)
		s.doc[slot] = doc
		s.bydoc[doc] = append(s.bydoc[doc], slot)
	}
	scale, norm := simd.Quantize(s.row(slot), v), Norm(v)
	s.weight[slot], s.scale[slot], s.norm[slot] = weightOf(scale, norm), scale, norm
	s.open[slot] = open
}

// moveSlot changes slot to to among the slots of note doc, or removes it
// when to is below 0.
func (s *Set) moveSlot(doc string, slot, to int) {
	list := s.bydoc[doc]
	i := slices.Index(list, slot)
	switch {
	case i < 0:
	case to >= 0:
		list[i] = to
	case len(list) == 1:
		delete(s.bydoc, doc)
	default:
		s.bydoc[doc] = slices.Delete(list, i, i+1)
	}
}

// drop removes the vector of chunk id: the last slot moves into its place.
func (s *Set) drop(id int64) {
	slot, ok := s.slots[id]
	if !ok {
		return
	}
	delete(s.slots, id)
	s.moveSlot(s.doc[slot], slot, -1)
	last := len(s.ids) - 1
	if slot != last {
		copy(s.row(slot), s.row(last))
		s.ids[slot], s.weight[slot], s.open[slot], s.doc[slot] = s.ids[last], s.weight[last], s.open[last], s.doc[last]
		s.scale[slot], s.norm[slot] = s.scale[last], s.norm[last]
		s.slots[s.ids[slot]] = slot
		s.moveSlot(s.doc[slot], last, slot)
	}
	s.ids, s.weight, s.open, s.doc = s.ids[:last], s.weight[:last], s.open[:last], s.doc[:last]
	s.scale, s.norm = s.scale[:last], s.norm[:last]
	if last%blockRows == 0 {
		s.blocks = s.blocks[:last/blockRows]
	}
}

// Diff returns nil when s and o hold the same vectors (each chunk's note,
// open flag, quantised row and weight, whatever their slots) and each is
// consistent within (its slots, its blocks and its notes' lists agree),
// and else the first difference found: how the index checks that a set
// kept by its writes holds what a fresh read of the file does.
func (s *Set) Diff(o *Set) error {
	for _, x := range []*Set{s, o} {
		if err := x.check(); err != nil {
			return err
		}
	}
	got, want := s.state(), o.state()
	if len(got) != len(want) {
		return fmt.Errorf("%d vectors, the other set %d", len(got), len(want))
	}
	for id, w := range want {
		if got[id] != w {
			return fmt.Errorf("chunk %d: %s, the other set %s", id, got[id], w)
		}
	}
	return nil
}

// state is the set as chunk id → its note, whether open, its weight and
// its quantised vector, whatever the slots' order.
func (s *Set) state() map[int64]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[int64]string, len(s.ids))
	for slot, id := range s.ids {
		out[id] = fmt.Sprint(s.doc[slot], s.open[slot], s.weight[slot], s.row(slot))
	}
	return out
}

// check reports an inconsistency between the set's slots, blocks and
// notes' lists.
func (s *Set) check() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.ids) != len(s.slots) || len(s.blocks) != (len(s.ids)+blockRows-1)/blockRows {
		return fmt.Errorf("%d slots, %d in the map, %d blocks", len(s.ids), len(s.slots), len(s.blocks))
	}
	listed := 0
	for doc, slots := range s.bydoc {
		if len(slots) == 0 {
			return fmt.Errorf("note %s is listed with no slot", doc)
		}
		for _, slot := range slots {
			if slot >= len(s.ids) || s.doc[slot] != doc {
				return fmt.Errorf("note %s lists slot %d, which is not its", doc, slot)
			}
		}
		listed += len(slots)
	}
	if listed != len(s.ids) {
		return fmt.Errorf("the notes list %d slots, the set has %d", listed, len(s.ids))
	}
	return nil
}
