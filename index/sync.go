package index

import (
	"context"
	"fmt"
)

// SyncResult is what Sync did.
type SyncResult struct {
	ApplyResult
	Reclassified Reclassified
}

// syncBatch bounds one transaction of a full sync, so readers and the feed
// are never locked out for long.
const syncBatch = 200

// Sync makes the index equal a complete listing of the source: upserts in
// batches (unchanged notes cost one lookup each), removes the paths in remove
// (normally Plan(listing).Remove, after the source confirmed they are gone),
// then recomputes every note's sensitivity. force re-chunks every note
// (`--rebuild`).
func (s *Store) Sync(ctx context.Context, listing []NoteInput, remove []string, force bool) (SyncResult, error) {
	var out SyncResult
	var err error
	for start := 0; start < len(listing); start += syncBatch {
		end := min(start+syncBatch, len(listing))
		res, err := s.Apply(ctx, Batch{Upserts: listing[start:end], Force: force})
		if err != nil {
			return out, err
		}
		out.add(res)
	}
	if len(remove) > 0 {
		res, err := s.Apply(ctx, Batch{Deletes: remove})
		if err != nil {
			return out, err
		}
		out.add(res)
	}
	if out.Reclassified, err = s.Recompute(ctx, false); err != nil {
		return out, fmt.Errorf("sync: %w", err)
	}
	return out, nil
}

func (r *SyncResult) add(a ApplyResult) {
	r.Added += a.Added
	r.Changed += a.Changed
	r.Touched += a.Touched
	r.Unchanged += a.Unchanged
	r.Deleted += a.Deleted
	r.Absent += a.Absent
}
