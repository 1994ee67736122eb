package index

import (
	"context"
	"fmt"
	"math"

	"github.com/vaultask/vaultask/index/vectorset"
	"github.com/vaultask/vaultask/vault"
)

// DistanceBounds bounds, for notes of docIDs, the cosine distance of the
// chunk NearestChunks would choose for vec under scope, from the
// shortlist's int8 copies of the vectors instead of the vectors, and its
// own list of each note's chunks with a vector: graph expansion reads
// exactly only the notes that may be among the nearest it keeps, and
// lists no chunk for that. Only the chunks the shortlist holds as open are
// bounded under ScopeOpen, so a personal chunk never moves an open note's
// bounds.
//
// A note is left out when it cannot be bounded: the shortlist holds no
// vector of a chunk of it in scope (it has none yet, or none scope may
// see), or one unusable; or the shortlist is still being read. Nothing is
// bounded without a query vector or with one that is zero or not finite.
//
// The approximate distance of a chunk is the cosine distance between vec
// and its dequantised vector scale·row, over the float vector's own norm.
// Each component of the dequantised vector is off by at most
// quantSlack·scale, so the dot product by at most quantSlack·scale·‖vec‖₁,
// the distance by that over ‖vec‖·‖v‖. The dot product of vec with row is
// taken in two int8 passes (see queryParts), off by at most the query's
// remainder times the row's norm, which the slack adds too; cosineSlack adds
// sqlite-vec's own rounding.
//
// The shortlist follows each write once it commits, so a reader's snapshot
// may be a write ahead of it or behind it: a note's distance in the
// snapshot may then be out of its bounds, and expansion keeps other notes
// than a read of one state would. It never keeps a note or a chunk scope
// may not see: NearestChunks reads the snapshot, under the scope.
func (s *Store) DistanceBounds(ctx context.Context, docIDs []string, vec []float32, scope vault.Scope) (map[string]vault.DistanceBounds, error) {
	if len(docIDs) == 0 || vec == nil {
		return nil, nil
	}
	if len(vec) != s.space.Dim {
		return nil, fmt.Errorf("distance bounds: query has %d dimensions, the index holds %d", len(vec), s.space.Dim)
	}
	if n := vectorset.Norm(vec); n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return nil, nil
	}
	sl, err := s.currentShortlist(ctx)
	if err != nil || sl == nil {
		return nil, err
	}
	bounds := sl.set.Bounds(vec, docIDs, scope.OpenOnly())
	out := make(map[string]vault.DistanceBounds, len(bounds))
	for doc, b := range bounds {
		out[doc] = vault.DistanceBounds{Lo: b.Lo, Hi: b.Hi}
	}
	return out, nil
}
