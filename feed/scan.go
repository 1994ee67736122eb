package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// Listing is the whole vault as one scan saw it.
type Listing struct {
	Since      string
	Identity   string
	Docs       int
	Notes      []vault.NoteInput
	Incomplete []index.NoteStatus
	Skipped    []index.NoteStatus
}

// List scans the whole database: every document through _all_docs in pages,
// chunks collected before any note is assembled, and the notes read into
// index input. Notes that can't be read whole are listed as incomplete.
func (r *Reconciler) List(ctx context.Context) (Listing, error) { return r.list(ctx, nil) }

// list is List, telling listed (when set) its progress after each page.
func (r *Reconciler) list(ctx context.Context, listed func(listed, total int)) (Listing, error) {
	var l Listing
	st, err := r.couch.state(ctx)
	if err != nil {
		return l, fmt.Errorf("reconcile: %w", err)
	}
	l.Since, l.Identity = st.UpdateSeq, st.Identity
	s := scan{r: r, chunks: newChunkCache(0), seen: map[string]bool{}, listed: listed}
	if err := s.allDocs(ctx); err != nil {
		return l, err
	}
	l.Docs = len(s.seen)
	winners := r.choose(s.notes)
	var unreadable []index.NoteStatus
	if l.Notes, l.Incomplete, unreadable, err = r.read(ctx, winners, s.chunks); err != nil {
		return l, err
	}
	l.Skipped = append(s.skipped, unreadable...)
	return l, nil
}

// scan is one pass over _all_docs.
type scan struct {
	r       *Reconciler
	chunks  *chunkCache
	notes   []livesync.Doc
	skipped []index.NoteStatus
	seen    map[string]bool
	listed  func(listed, total int)
}

// allDocs lists every document, page by page, and completes the listing
// when _all_docs counts more documents than it listed.
func (s *scan) allDocs(ctx context.Context) error {
	page := max(s.r.PageSize, 2)
	total, last := -1, ""
	for {
		n, end, pageTotal, err := s.r.couch.listPage(ctx, last, page, s.take)
		switch {
		case errors.As(err, new(*fatalError)):
			return err // from take: the vault cannot be decoded
		case err != nil:
			return fmt.Errorf("reconcile: %w", err)
		}
		last = end
		if total < 0 {
			total = pageTotal
		}
		if s.listed != nil {
			s.listed(len(s.seen), max(total, len(s.seen)))
		}
		if n < page {
			break
		}
	}
	if total > len(s.seen) {
		return s.complete(ctx, total)
	}
	return nil
}

// complete finds the documents _all_docs counted in total_rows but did not
// list (the test server's default key range ends at U+FFFF and drops ids
// outside the BMP) from the ids of _changes, and fetches them by key.
func (s *scan) complete(ctx context.Context, total int) error {
	s.r.log.Info("_all_docs listed fewer documents than it counts; completing the listing from _changes", keyCount, len(s.seen), keyTotal, total)
	ids, err := s.r.couch.liveIDs(ctx, s.seen)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	raws, err := s.r.couch.fetch(ctx, ids)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	for _, id := range ids {
		if raw, ok := raws[id]; ok {
			if err := s.take(id, raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// take classifies one listed document.
func (s *scan) take(id string, raw json.RawMessage) error {
	s.seen[id] = true
	doc, err := s.r.couch.dec.Decode(raw)
	if err != nil {
		if fatalDecode(err) {
			return fatal(s.r.couch.decodeError(err))
		}
		s.r.log.Warn("skip malformed document", keyID, id, keyErr, err)
		if doc.Kind == livesync.KindNote {
			s.skipped = append(s.skipped, index.NoteStatus{SourceID: id, Path: id, Rev: doc.Rev, State: vault.StatusSkipped, Reason: "unreadable document: " + err.Error()})
		}
		return nil
	}
	switch doc.Kind {
	case livesync.KindChunk:
		s.chunks.put(doc.ID, doc.Data)
	case livesync.KindNote:
		if doc.Note.Deleted {
			break
		}
		if why := s.r.couch.skipReason(doc.Note); why != "" {
			s.skipped = append(s.skipped, index.NoteStatus{SourceID: doc.ID, Path: doc.Note.Path, Rev: doc.Rev, State: vault.StatusSkipped, Reason: why})
			break
		}
		s.notes = append(s.notes, doc)
	case livesync.KindSkip:
		if doc.Version > livesync.FormatVersion {
			s.r.couch.warnNewerFormat(doc.Version)
		}
	}
	return nil
}

// choose settles documents that claim one path (FORMAT.md §2, stale metadata
// after a case change): the document whose id LiveSync derives from the path
// wins, else the newest mtime, else the greatest id. Soft-deleted documents
// never reach here, so a stale deleted one cannot hide a live one.
func (r *Reconciler) choose(notes []livesync.Doc) []livesync.Doc {
	best := map[string]livesync.Doc{}
	for _, d := range notes {
		key := vault.DocID(d.Note.Path)
		cur, ok := best[key]
		if !ok || r.couch.prefer(d, cur) {
			best[key] = d
		}
	}
	out := make([]livesync.Doc, 0, len(best))
	for _, d := range best {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Note.Path < out[j].Note.Path })
	return out
}
