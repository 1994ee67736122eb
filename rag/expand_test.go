package rag

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/vault"
)

// Expand over the notes expansionReads asks for keeps what Expand over
// every reached note keeps, on random neighbourhoods: groups larger and
// smaller than the cut, a note in several groups and twice in one (a
// sibling through two topic notes), topic notes (the one a sibling is
// reached through among them), the direct hits' own notes among the
// neighbours, notes without a distance or without a chunk in scope, notes
// the bounds leave out, bounds as loose as the shortlist's and ties. It must also read fewer notes than it is given, or it proves
// nothing.
func TestExpansionReadsKeepWhatExpandKeeps(t *testing.T) {
	rnd := rand.New(rand.NewPCG(22, 7))
	rels := []vault.Relation{vault.RelationTopic, vault.RelationMember, vault.RelationSibling, vault.RelationLink, vault.RelationBacklink}
	given, read := 0, 0
	for trial := range 400 {
		notes := 5 + rnd.IntN(60)
		doc := func(i int) vault.Doc {
			return vault.Doc{DocID: fmt.Sprintf("n%02d.md", i), Path: fmt.Sprintf("N%02d.md", i)}
		}
		var direct []Hit
		for i := range 1 + rnd.IntN(4) {
			direct = append(direct, Hit{Chunk: chunk(int64(1000+i), doc(i).Path, 0, 0), Score: 1 / float64(i+1)})
		}
		var nb []vault.Hop
		for range rnd.IntN(120) {
			from := doc(rnd.IntN(len(direct) + 1)) // now and then a note that is not a start
			n := vault.Hop{From: from.DocID, Relation: rels[rnd.IntN(len(rels))], To: doc(rnd.IntN(notes)).DocID}
			if n.Relation == vault.RelationSibling {
				// The topic note a sibling is reached through is a topic
				// neighbour of the same note, as Hops reads them.
				n.Via = doc(rnd.IntN(notes)).DocID
				nb = append(nb, vault.Hop{From: n.From, Relation: vault.RelationTopic, To: n.Via})
			}
			nb = append(nb, n)
			if rnd.IntN(8) == 0 {
				nb = append(nb, n) // twice in its group
			}
		}
		// Each note's nearest chunk and its distance, drawn from few
		// values so that ties are common; some notes have no distance,
		// some no chunk in scope at all.
		var chunks []vault.Chunk
		dist := map[int64]float64{}
		bounds := map[string]vault.DistanceBounds{}
		for i := range notes {
			d := doc(i)
			switch r := rnd.IntN(10); {
			case r == 0:
				continue // no chunk in scope: neither read nor bounded
			case r == 1:
				chunks = append(chunks, chunk(int64(i+1), d.Path, 0, 0))
				bounds[d.DocID] = vault.DistanceBounds{Lo: math.Inf(1), Hi: math.Inf(1)}
			default:
				c := chunk(int64(i+1), d.Path, rnd.IntN(3), 0)
				chunks = append(chunks, c)
				exact := float64(rnd.IntN(12)) / 10
				dist[c.RowID] = exact
				if rnd.IntN(6) != 0 { // else left out: it cannot be ruled out
					slack := rnd.Float64() * 0.3
					bounds[d.DocID] = vault.DistanceBounds{Lo: exact - rnd.Float64()*slack, Hi: exact + rnd.Float64()*slack}
				}
			}
		}
		g := Graph{MaxPerRelation: rnd.IntN(7), Discount: 0.5, MapMinLinks: rnd.IntN(4)}
		want := Expand(direct, nb, chunks, dist, g)

		ids := reachedNotes(direct, nb)
		reads := expansionReads(ids, direct, nb, bounds, g)
		var readChunks []vault.Chunk
		for _, c := range chunks {
			if slices.Contains(reads, c.DocID) {
				readChunks = append(readChunks, c)
			}
		}
		got := Expand(direct, nb, readChunks, dist, g)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("trial %d (MaxPerRelation %d): Expand over the notes read differs (-all +read):\n%s", trial, g.MaxPerRelation, diff)
		}
		if all := expansionReads(ids, direct, nb, nil, g); !slices.Equal(all, ids) {
			t.Fatalf("trial %d: without bounds read %v, want every reached note %v", trial, all, ids)
		}
		for _, id := range ids {
			if startsOf(direct)[id] != (start{}) {
				t.Fatalf("trial %d: %s is a direct hit's note, reached as a neighbour", trial, id)
			}
		}
		given += len(ids)
		read += len(reads)
	}
	if read >= given*9/10 {
		t.Fatalf("read %d of %d reached notes: the bounds ruled out too few for the test to mean anything", read, given)
	}
	t.Logf("read %d of %d reached notes", read, given)
}
