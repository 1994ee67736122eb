package rag

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/vaultask/vaultask/vault"
)

// expandHits over the notes expansionReads asks for keeps what expandHits over
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
		g := hopRule{MaxPerRelation: rnd.IntN(7), Discount: 0.5, MapMinLinks: rnd.IntN(4)}
		want := expandHits(direct, nb, chunks, dist, g)

		ids := reachedNotes(direct, nb)
		reads := expansionReads(ids, direct, nb, bounds, g)
		var readChunks []vault.Chunk
		for _, c := range chunks {
			if slices.Contains(reads, c.DocID) {
				readChunks = append(readChunks, c)
			}
		}
		got := expandHits(direct, nb, readChunks, dist, g)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("trial %d (MaxPerRelation %d): expandHits over the notes read differs (-all +read):\n%s", trial, g.MaxPerRelation, diff)
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

// A note the direct hits found but ranked below what expansion gives a
// member of a topic note among them is scored as that member, taking a
// member slot: finding a clipping directly must not put it below where
// expansion puts the clippings it did not find. Only as many as there are
// member slots are promoted, the best first, expanded members competing for
// them; a weak direct hit that is no member, or one already above its
// member score, keeps its place.
func TestPromoteMembers(t *testing.T) {
	t.Parallel()
	topic := direct(1, "99 topics/T.md", 1)
	clipFound := direct(2, "clip found.md", 0.1)   // a member, found weakly
	clipStrong := direct(3, "clip strong.md", 0.9) // a member, found above 0.7
	other := direct(4, "other.md", 0.05)           // found weakly, linked only
	clip2 := direct(5, "clip two.md", 0.2)         // a second member found weakly
	hops := []vault.Hop{
		{From: topic.Chunk.DocID, Relation: vault.RelationMember, To: clipFound.Chunk.DocID},
		{From: topic.Chunk.DocID, Relation: vault.RelationMember, To: clipStrong.Chunk.DocID},
		{From: topic.Chunk.DocID, Relation: vault.RelationMember, To: clip2.Chunk.DocID},
		{From: topic.Chunk.DocID, Relation: vault.RelationLink, To: other.Chunk.DocID},
	}
	hits := []Hit{topic, clipStrong, clip2, clipFound, other}
	memberOf := func(row int64, doc string, score float64) Hit {
		h := expandedHit(row, doc, score)
		h.Graph = &Reach{Relation: vault.RelationMember, From: topic.Chunk.Path}
		return h
	}
	type row struct {
		Row    int64
		Score  float64
		Member bool
	}
	rows := func(hs []Hit) []row {
		var out []row
		for _, h := range hs {
			out = append(out, row{h.Chunk.RowID, h.Score, h.Graph != nil && h.Graph.Relation == vault.RelationMember && h.From(FromFTS) && h.From(FromGraph)})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		expanded []Hit
		slots    int
		want     []row
		promoted []string
	}{
		{"one slot: the member found, on a tie by path", nil, 1,
			[]row{{1, 1, false}, {3, 0.9, false}, {2, 0.7, true}, {5, 0.2, false}, {4, 0.05, false}}, []string{"clip found.md"}},
		{"two slots: both weak members", nil, 2,
			[]row{{1, 1, false}, {3, 0.9, false}, {5, 0.7, true}, {2, 0.7, true}, {4, 0.05, false}}, []string{"clip two.md", "clip found.md"}},
		{"an expanded member scoring higher takes the one slot", []Hit{memberOf(9, "clip unseen.md", 0.8)}, 1,
			[]row{{1, 1, false}, {3, 0.9, false}, {5, 0.2, false}, {2, 0.1, false}, {4, 0.05, false}}, nil},
		{"an expanded member on a tie comes after a promotion", []Hit{memberOf(9, "clip unseen.md", 0.7)}, 1,
			[]row{{1, 1, false}, {3, 0.9, false}, {2, 0.7, true}, {5, 0.2, false}, {4, 0.05, false}}, []string{"clip found.md"}},
		{"no member slots", nil, 0,
			[]row{{1, 1, false}, {3, 0.9, false}, {5, 0.2, false}, {2, 0.1, false}, {4, 0.05, false}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, promoted := promoteMembers(hits, tc.expanded, hops, 0.7, tc.slots)
			if diff := cmp.Diff(tc.want, rows(got), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.promoted, promoted); diff != "" {
				t.Errorf("promoted (-want +got):\n%s", diff)
			}
		})
	}
	if hits[3].Graph != nil || hits[3].Score != 0.1 {
		t.Errorf("the direct hits given were changed: %+v", hits[3])
	}
}
