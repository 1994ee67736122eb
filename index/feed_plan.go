package index

import (
	"context"
	"fmt"
	"sort"

	"github.com/vaultask/vaultask/vault"
)

// Plan is what applying a full listing of the source would do, computed
// without writing: the dry run of `vaultask index` and `vaultask reconcile`.
type Plan struct {
	Add       []string // paths new to the index
	Change    []string // paths whose text changed
	Touch     []string // paths with a new revision of the same text
	Remove    []string // indexed paths the listing no longer has
	Unchanged int
	Indexed   int // notes the index held
	// Expect is what the index held when the plan was made: the revision
	// of every note of the listing or of Remove, by DocID, "" for none.
	// Sync applies the plan against it (Batch.Expect), so a note written
	// since by someone else is not overwritten by this older listing.
	Expect map[string]string
}

// Plan diffs a complete listing of the source against the index by
// (rev, content hash). Notes the index holds but the listing lacks are
// planned for removal.
func (f *Feed) Plan(ctx context.Context, listing []vault.NoteInput) (Plan, error) {
	p := Plan{Expect: map[string]string{}}
	type row struct{ id, path, rev, hash string }
	indexed, err := queryAll(ctx, f.db.reader, func(r *row) []any { return []any{&r.id, &r.path, &r.rev, &r.hash} },
		`SELECT doc_id, path, rev, content_hash FROM docs`)
	if err != nil {
		return p, fmt.Errorf("plan: %w", err)
	}
	have := make(map[string]row, len(indexed))
	for _, r := range indexed {
		have[r.id] = r
	}
	p.Indexed = len(have)
	seen := map[string]bool{}
	for _, n := range listing {
		id := vault.DocID(n.Path)
		seen[id] = true
		old, ok := have[id]
		p.Expect[id] = old.rev
		switch {
		case !ok:
			p.Add = append(p.Add, n.Path)
		case old.hash != contentHash(n.Text) || old.path != n.Path:
			p.Change = append(p.Change, n.Path)
		case old.rev != n.Rev:
			p.Touch = append(p.Touch, n.Path)
		default:
			p.Unchanged++
		}
	}
	for id, r := range have {
		if !seen[id] {
			p.Remove = append(p.Remove, r.path)
			p.Expect[id] = r.rev
		}
	}
	sort.Strings(p.Remove)
	return p, nil
}

// recentRevsSQL reads the n notes written last through the index docs_recent
// (migration 0017), so that the feed's check every few seconds reads those
// rows alone.
const recentRevsSQL = `SELECT source_id, rev FROM docs WHERE source_id != '' ORDER BY indexed_at DESC, doc_id LIMIT ?`

// RecentRevs maps the source id (CouchDB _id) of the n notes written last to
// the revision indexed: a source that does not know those revisions is not
// the database they came from.
func (f *Feed) RecentRevs(ctx context.Context, n int) (map[string]string, error) {
	type pair struct{ id, rev string }
	pairs, err := queryAll(ctx, f.db.reader, func(p *pair) []any { return []any{&p.id, &p.rev} }, recentRevsSQL, n)
	if err != nil {
		return nil, fmt.Errorf("list recent revisions: %w", err)
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p.id] = p.rev
	}
	return out, nil
}

// SourcePaths maps each note's source id (CouchDB _id) to its path, so a
// follower can remove a note named only by a tombstone's id.
func (f *Feed) SourcePaths(ctx context.Context) (map[string]string, error) {
	type pair struct{ id, path string }
	pairs, err := queryAll(ctx, f.db.reader, func(p *pair) []any { return []any{&p.id, &p.path} }, `SELECT source_id, path FROM docs WHERE source_id != ''`)
	if err != nil {
		return nil, fmt.Errorf("list source ids: %w", err)
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p.id] = p.path
	}
	return out, nil
}
