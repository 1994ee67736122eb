package vectorset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// unit is a deterministic unit vector of dim dimensions for seed.
func unit(seed, dim int) []float32 {
	r := rand.New(rand.NewPCG(uint64(seed), 5))
	v := make([]float32, dim)
	var norm float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		norm += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

// TestApplyKeepsSet replays random puts, drops, moves between notes and
// sensitivity changes over more than one block, and checks after each
// batch that the set is consistent and holds what a set built from the
// surviving vectors alone holds.
func TestApplyKeepsSet(t *testing.T) {
	const dim = 64
	r := rand.New(rand.NewPCG(1, 1))
	s := New(dim)
	type held struct {
		doc  string
		seed int
		open bool
	}
	want := map[int64]held{}
	for round := range 40 {
		var changes []Change
		for range 200 {
			id := int64(r.IntN(3 * blockRows))
			switch h, ok := want[id]; {
			case r.IntN(4) == 0:
				changes = append(changes, Change{ID: id, Dropped: true})
				delete(want, id)
			case ok && r.IntN(3) == 0:
				h.open = !h.open
				want[id] = h
				changes = append(changes, Change{ID: id, Open: h.open})
			default:
				h := held{doc: fmt.Sprintf("n%d.md", r.IntN(300)), seed: r.IntN(1 << 20), open: r.IntN(2) == 0}
				want[id] = h
				changes = append(changes, Change{ID: id, Doc: h.doc, Vec: unit(h.seed, dim), Open: h.open})
			}
		}
		s.Apply(changes)
		fresh := New(dim)
		for id, h := range want {
			fresh.Put(id, h.doc, unit(h.seed, dim), h.open)
		}
		if err := s.Diff(fresh); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if s.Len() != len(want) {
			t.Fatalf("round %d: %d vectors, want %d", round, s.Len(), len(want))
		}
	}
	for id, h := range want {
		if doc, open, ok := s.Lookup(id); !ok || doc != h.doc || open != h.open {
			t.Fatalf("Lookup(%d) = %q, %v, %v; want %q, %v", id, doc, open, ok, h.doc, h.open)
		}
	}
}

// Diff finds a vector one set lacks, one of another note, one of the other
// sensitivity and one with another value.
func TestDiffFindsDifferences(t *testing.T) {
	const dim = 32
	build := func(edit func(s *Set)) *Set {
		s := New(dim)
		for i := range 10 {
			s.Put(int64(i), fmt.Sprintf("n%d.md", i%3), unit(i, dim), i%2 == 0)
		}
		edit(s)
		return s
	}
	base := build(func(*Set) {})
	if err := base.Diff(build(func(*Set) {})); err != nil {
		t.Fatalf("equal sets: %v", err)
	}
	for name, edit := range map[string]func(s *Set){
		"missing":     func(s *Set) { s.Apply([]Change{{ID: 4, Dropped: true}}) },
		"other note":  func(s *Set) { s.Put(4, "x.md", unit(4, dim), true) },
		"personal":    func(s *Set) { s.Apply([]Change{{ID: 4, Open: false}}) },
		"other value": func(s *Set) { s.Put(4, "n1.md", unit(99, dim), true) },
	} {
		if err := base.Diff(build(edit)); err == nil {
			t.Errorf("%s: no difference found", name)
		}
	}
}

// A vector of another dimension is a caller's bug, refused before it
// could corrupt a block.
func TestPutRefusesOtherDimension(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	New(8).Put(1, "a.md", make([]float32, 9), true)
}
