package rag

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"

	"github.com/vaultask/vaultask/vault"
)

// graphSources are the notes expansion starts from: the distinct notes of
// the first n direct hits, the ones that can reach the answer.
func graphSources(direct []Hit, n int) []string {
	var ids []string
	seen := map[string]bool{}
	for i, h := range direct {
		if i >= n {
			break
		}
		if !seen[h.Chunk.DocID] {
			seen[h.Chunk.DocID] = true
			ids = append(ids, h.Chunk.DocID)
		}
	}
	return ids
}

// hopRule is how expandHits hops.
type hopRule struct {
	// MaxPerRelation is how many siblings, linked notes and linking notes
	// each hit's note contributes at most, nearest the query first.
	MaxPerRelation int
	// Discount scales the score of the hit that reached a note.
	Discount float64
	// MapMinLinks makes a hit's note that links to at least this many
	// notes a map of content: its linked notes are marked Reach.Map, for
	// the slots only they may take (see selectFinal). 0 marks none.
	MapMinLinks int
}

// expandHits turns the one-hop neighbours of the direct hits' notes into
// expanded hits, one chunk per note, never recursing. neighbours are the
// hops from Searcher.Hops, chunks are the neighbours' chunks in document
// order (each note's nearest alone, as Searcher.NearestChunks reads them,
// will do) and dist their distances to the query (nil without a query
// vector). A note is known by its chunks: one without a chunk in chunks is
// not expanded, and a hit's path is its chunk's.
//
// Each note contributes its chunk nearest the query (its first chunk when
// none has a distance). From each hit's note every topic note is taken (by
// path), and up to g.MaxPerRelation siblings, linked notes and linking
// notes each, nearest the query first. An expanded hit scores g.Discount ×
// the score of the hit that reached it, the best such when several did; a
// note linked from a map of content scores just below the map. Notes
// already among the direct hits are not expanded again.
func expandHits(direct []Hit, neighbours []vault.Hop, chunks []vault.Chunk, dist map[int64]float64, g hopRule) []Hit {
	starts := startsOf(direct)
	best := nearestChunks(chunks, dist)
	links := map[string]int{}
	for _, n := range neighbours {
		if n.Relation == vault.RelationLink {
			links[n.From]++
		}
	}
	reached := map[string]Hit{}
	var order []string
	for _, ng := range groupNeighbours(neighbours, starts, best) {
		ns := ng.neighbours
		if ng.rel == vault.RelationTopic {
			slices.SortStableFunc(ns, func(a, b vault.Hop) int { return cmp.Compare(best[a.To].Chunk.Path, best[b.To].Chunk.Path) })
		} else {
			slices.SortStableFunc(ns, func(a, b vault.Hop) int { return nearer(best[a.To], best[b.To]) })
			ns = ns[:min(len(ns), max(g.MaxPerRelation, 0))]
		}
		from := starts[ng.from]
		isMap := ng.rel == vault.RelationLink && g.MapMinLinks > 0 && links[ng.from] >= g.MapMinLinks
		for _, n := range ns {
			score := g.Discount * from.score
			if isMap {
				// Right behind the map: rank fusion's scores are so close
				// together that a discounted score would put the map's
				// notes behind every direct hit, where no slot helps.
				score = math.Nextafter(from.score, 0)
			}
			if cur, ok := reached[n.To]; ok && cur.Score >= score {
				continue
			} else if !ok {
				order = append(order, n.To)
			}
			h := best[n.To]
			h.Sources = []Source{FromGraph}
			h.Score = score
			h.Graph = &Reach{Relation: n.Relation, From: from.path, Via: viaPath(n.Via, starts, best), Map: isMap}
			reached[n.To] = h
		}
	}
	out := make([]Hit, 0, len(order))
	for _, id := range order {
		out = append(out, reached[id])
	}
	slices.SortStableFunc(out, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// viaPath is the path of the topic note a sibling is reached through: it
// is a topic neighbour of the same start, so a direct hit's note or a note
// read (expansionReads always reads a topic note); its doc id when it has
// no chunk in scope; "" for no topic note.
func viaPath(via string, starts map[string]start, best map[string]Hit) string {
	if h, ok := best[via]; ok {
		return h.Chunk.Path
	}
	if s, ok := starts[via]; ok {
		return s.path
	}
	return via
}

// start is a direct hit's note as expansion starts from it: its path and
// its best hit's score.
type start struct {
	path  string
	score float64
}

// startsOf maps the notes of the direct hits to where expansion starts.
func startsOf(direct []Hit) map[string]start {
	starts := map[string]start{}
	for _, h := range direct {
		if _, ok := starts[h.Chunk.DocID]; !ok {
			starts[h.Chunk.DocID] = start{h.Chunk.Path, h.Score}
		}
	}
	return starts
}

// reachedNotes are the notes expansion may add, each once, in the order
// the neighbours first reach them: not the direct hits' own notes.
func reachedNotes(direct []Hit, neighbours []vault.Hop) []string {
	starts := startsOf(direct)
	seen := map[string]bool{}
	var ids []string
	for _, n := range neighbours {
		if _, ok := starts[n.To]; !ok && !seen[n.To] {
			seen[n.To] = true
			ids = append(ids, n.To)
		}
	}
	return ids
}

// expansionReads are the notes of ids whose nearest chunks expandHits needs:
// every note but those that bounds prove cannot be kept. In a group of
// neighbours expandHits cuts to g.MaxPerRelation, nearest first, a note whose
// lower bound is above the g.MaxPerRelation-th smallest upper bound of the
// group is farther than that many others and is left out of it; a note is
// not read when every group it is in leaves it out. A topic note is always
// read, and so is a note bounds leave out: it cannot be ruled out. So is
// each group's first bounded note:
// where it comes among the neighbours is where expandHits takes the group up,
// and so which of two hits of one score comes first. expandHits over the notes
// read keeps what it would keep over all of them, in the same order.
func expansionReads(ids []string, direct []Hit, neighbours []vault.Hop, bounds map[string]vault.DistanceBounds, g hopRule) []string {
	if len(bounds) == 0 {
		return ids
	}
	k := max(g.MaxPerRelation, 0)
	// Every note of ids may take a group's place; a note that has no
	// chunk in scope takes none in expandHits (NearestChunks returns none
	// for it), so counting it only keeps more.
	present := map[string]Hit{}
	for _, id := range ids {
		present[id] = Hit{}
	}
	needed := map[string]bool{}
	for _, ng := range groupNeighbours(neighbours, startsOf(direct), present) {
		if ng.rel == vault.RelationTopic || len(ng.neighbours) <= k {
			for _, n := range ng.neighbours {
				needed[n.To] = true
			}
			continue
		}
		if k == 0 {
			continue
		}
		his := make([]float64, 0, len(ng.neighbours))
		for _, n := range ng.neighbours {
			if b, ok := bounds[n.To]; ok {
				his = append(his, b.Hi)
			}
		}
		threshold := math.Inf(1)
		if len(his) >= k {
			slices.Sort(his)
			threshold = his[k-1]
		}
		first := true
		for _, n := range ng.neighbours {
			b, ok := bounds[n.To]
			if !ok || first || !(b.Lo > threshold) {
				needed[n.To] = true
			}
			first = first && !ok
		}
	}
	var out []string
	for _, id := range ids {
		if needed[id] {
			out = append(out, id)
		}
	}
	return out
}

// nearestChunks maps each note to its chunk nearest the query, its first
// chunk when none has a distance.
func nearestChunks(chunks []vault.Chunk, dist map[int64]float64) map[string]Hit {
	best := map[string]Hit{}
	for _, c := range chunks {
		d, has := dist[c.RowID]
		cur, ok := best[c.DocID]
		if !ok || (has && (!cur.HasDistance || d < cur.Distance)) {
			best[c.DocID] = Hit{Chunk: c, Distance: d, HasDistance: has}
		}
	}
	return best
}

// neighbourGroup are the neighbours one start reaches by one relation.
type neighbourGroup struct {
	from       string
	rel        vault.Relation
	neighbours []vault.Hop
}

// groupNeighbours groups the neighbours that expansion may add by the
// start and relation that reach them, in the order they first appear:
// neither a direct hit's note, nor one reached from a note that is not a
// start, nor one without a chunk the scope may see.
func groupNeighbours(neighbours []vault.Hop, starts map[string]start, best map[string]Hit) []neighbourGroup {
	type key struct {
		from string
		rel  vault.Relation
	}
	index := map[key]int{}
	var out []neighbourGroup
	for _, n := range neighbours {
		if _, direct := starts[n.To]; direct {
			continue
		}
		if _, ok := starts[n.From]; !ok {
			continue
		}
		if _, ok := best[n.To]; !ok {
			continue
		}
		k := key{n.From, n.Relation}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, neighbourGroup{from: n.From, rel: n.Relation})
		}
		out[i].neighbours = append(out[i].neighbours, n)
	}
	return out
}

// nearer orders two notes' nearest chunks: one with a distance first, then
// the nearer, then by path.
func nearer(a, b Hit) int {
	if a.HasDistance != b.HasDistance {
		if a.HasDistance {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.Chunk.Path, b.Chunk.Path))
}

// topicsOf maps each note to the topic notes that clip it, from the
// expansion's neighbours, so assembly can put a topic note first.
func topicsOf(neighbours []vault.Hop) map[string][]string {
	out := map[string][]string{}
	for _, n := range neighbours {
		if n.Relation == vault.RelationTopic {
			out[n.From] = append(out[n.From], n.To)
		}
	}
	return out
}

// mergeByScore merges direct and expanded hits into one list, higher score
// first; on a tie the direct hit comes first.
func mergeByScore(direct, expanded []Hit) []Hit {
	out := slices.Concat(direct, expanded)
	slices.SortStableFunc(out, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// promoteMembers gives a note that the direct hits found, but ranked below
// what reaching it as a member of a topic note among them would score
// (graph_discount × the topic note's best hit), that score: finding a note
// directly must not rank it below where expansion puts the members it did
// not find. A promoted hit is its note's best direct hit, now also reached
// by the graph (Sources gain FromGraph, Graph the topic note), and it takes
// a member slot as expanded members do: of the would-be promotions and the
// expanded members together, only the best memberSlots (a promotion first
// on a tie) take a slot, so only the promotions among them are made. It
// returns the direct hits, re-sorted by score, and the promoted notes.
func promoteMembers(direct, expanded []Hit, neighbours []vault.Hop, discount float64, memberSlots int) ([]Hit, []string) {
	starts := startsOf(direct)
	type member struct {
		doc, from string // doc is "" for an expanded member
		score     float64
	}
	best := map[string]member{}
	for _, n := range neighbours {
		from, ok := starts[n.From]
		to, found := starts[n.To]
		if !ok || !found || n.Relation != vault.RelationMember || n.To == n.From {
			continue
		}
		if score := discount * from.score; score > to.score && score > best[n.To].score {
			best[n.To] = member{n.To, from.path, score}
		}
	}
	if len(best) == 0 {
		return direct, nil
	}
	var ms []member
	for _, m := range best {
		ms = append(ms, m)
	}
	for _, h := range expanded {
		if h.Graph.Relation == vault.RelationMember {
			ms = append(ms, member{score: h.Score})
		}
	}
	// Higher scores first; on a tie a promotion before an expanded member.
	expandedLast := func(m member) int {
		if m.doc == "" {
			return 1
		}
		return 0
	}
	slices.SortFunc(ms, func(a, b member) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(expandedLast(a), expandedLast(b)), cmp.Compare(a.doc, b.doc))
	})
	promoted := map[string]member{}
	for _, m := range ms[:min(len(ms), max(memberSlots, 0))] {
		if m.doc != "" {
			promoted[m.doc] = m
		}
	}
	out := slices.Clone(direct)
	var docs []string
	for i, h := range out {
		m, ok := promoted[h.Chunk.DocID]
		if !ok {
			continue
		}
		delete(promoted, h.Chunk.DocID)
		docs = append(docs, h.Chunk.Path)
		h.Score = m.score
		h.Sources = append(slices.Clone(h.Sources), FromGraph)
		h.Graph = &Reach{Relation: vault.RelationMember, From: m.from}
		out[i] = h
	}
	slices.SortStableFunc(out, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return out, docs
}

func (p *Pipeline) expand(ctx context.Context, direct []Hit, vec vault.QueryVector, s Settings, scope vault.Scope) ([]Hit, []vault.Hop, error) {
	nb, err := p.opts.Searcher.Hops(ctx, graphSources(direct, s.FinalTopK), scope)
	if err != nil || len(nb) == 0 {
		return nil, nil, err
	}
	g := hopRule{MaxPerRelation: s.GraphMaxSiblings, Discount: s.GraphDiscount, MapMinLinks: s.GraphMapMinLinks}
	ids := reachedNotes(direct, nb)
	bounds, err := p.opts.Searcher.DistanceBounds(ctx, ids, vec, scope)
	if errors.Is(err, vault.ErrOtherSpace) {
		// The index switched to a re-embedded space since the question
		// was embedded: the neighbours are read without the vector.
		vec, bounds, err = vault.QueryVector{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	chunks, dist, err := p.opts.Searcher.NearestChunks(ctx, expansionReads(ids, direct, nb, bounds, g), vec, scope)
	if errors.Is(err, vault.ErrOtherSpace) {
		chunks, dist, err = p.opts.Searcher.NearestChunks(ctx, expansionReads(ids, direct, nb, nil, g), vault.QueryVector{}, scope)
	}
	if err != nil {
		return nil, nil, err
	}
	return expandHits(direct, nb, chunks, dist, g), nb, nil
}
