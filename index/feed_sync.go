package index

import (
	"context"
	"fmt"

	"github.com/vaultask/vaultask/vault"
)

// SyncOptions change how Sync writes.
type SyncOptions struct {
	// Force re-chunks every note, changed or not (`--rebuild`).
	Force bool
	// Progress, when set, is called with 0 and the listing's size before
	// the first batch, then after each batch with the notes of the listing
	// written so far.
	Progress func(done, total int)
	// BatchSize is the notes of one transaction; zero takes syncBatch.
	BatchSize int
}

// SyncResult is what Sync did.
type SyncResult struct {
	ApplyResult
	Reclassified Reclassified
}

// syncBatch bounds one transaction of a full sync, so readers and the feed
// are never locked out for long.
const syncBatch = 200

// Sync makes the index equal a complete listing of the source, as plan
// (Plan(listing), its removals confirmed by the source) says: upserts in
// batches (unchanged notes cost one lookup each), then plan.Remove, each
// write only while the index still holds what plan.Expect says it held, then
// recomputes every note's sensitivity.
func (f *Feed) Sync(ctx context.Context, listing []vault.NoteInput, plan Plan, opts SyncOptions) (SyncResult, error) {
	var out SyncResult
	var err error
	// A sync of more than one batch refreshes link text once, at its end.
	// The first batch that marks a note records that the index's link text
	// is not done, so a sync cut short is made good when the index is next
	// opened (ensureLinkText); a sync that changes nothing writes nothing.
	var linked map[string]bool
	batch := opts.BatchSize
	if batch <= 0 {
		batch = syncBatch
	}
	if len(listing) > batch {
		linked = map[string]bool{}
	}
	if opts.Progress != nil {
		opts.Progress(0, len(listing))
	}
	for start := 0; start < len(listing); start += batch {
		end := min(start+batch, len(listing))
		res, err := f.Apply(ctx, Batch{Upserts: listing[start:end], Force: opts.Force, Expect: plan.Expect, linked: linked})
		if err != nil {
			return out, err
		}
		out.ApplyResult = out.ApplyResult.Add(res)
		if opts.Progress != nil {
			opts.Progress(end, len(listing))
		}
	}
	if len(linked) > 0 {
		if err := f.db.write(ctx, "link text", func(tx *writeTx) error {
			w := newApplier(f.db, tx)
			w.linked = linked
			if err := w.refreshLinkText(ctx); err != nil {
				return err
			}
			return setMeta(ctx, tx, linkTextMeta, "1")
		}); err != nil {
			return out, fmt.Errorf("link text: %w", err)
		}
	}
	if len(plan.Remove) > 0 {
		res, err := f.Apply(ctx, Batch{Deletes: plan.Remove, Expect: plan.Expect})
		if err != nil {
			return out, err
		}
		out.ApplyResult = out.ApplyResult.Add(res)
	}
	if out.Reclassified, err = f.Reclassify(ctx, false); err != nil {
		return out, fmt.Errorf("sync: %w", err)
	}
	return out, nil
}
