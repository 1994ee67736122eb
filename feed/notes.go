package feed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/vault"
)

// readNotes reassembles notes from src, fetching every chunk src lacks (for
// all the notes together) with one batched keys lookup. texts[i] is set when
// errs[i] is nil; errs[i] wraps livesync.ErrMissingChunks or ErrSizeMismatch
// for a note that must wait. The returned error is a failure of the lookup or
// a vault-wide decoding error.
func (c *Couch) readNotes(ctx context.Context, notes []*livesync.Note, src *chunkCache) (texts []string, errs []error, err error) {
	texts, errs = make([]string, len(notes)), make([]error, len(notes))
	var want []string
	seen := map[string]bool{}
	for i, n := range notes {
		b, err := n.Read(src)
		texts[i], errs[i] = string(b), err
		var missing *livesync.MissingChunksError
		if errors.As(err, &missing) {
			for _, id := range missing.IDs {
				if !seen[id] {
					seen[id] = true
					want = append(want, id)
				}
			}
		}
	}
	if len(want) == 0 {
		return texts, errs, nil
	}
	got, err := c.fetch(ctx, want)
	if err != nil {
		return nil, nil, err
	}
	// The fetched chunks are read from here, so that a bounded src that
	// evicts them again still lets the notes be read.
	fetched := overlay{top: livesync.ChunkMap{}, under: src}
	for id, raw := range got {
		doc, err := c.dec.Decode(raw)
		if err != nil {
			if fatalDecode(err) {
				return nil, nil, fatal(c.decodeError(err))
			}
			c.log.Warn("skip malformed chunk", keyID, id, keyErr, err)
			continue
		}
		if doc.Kind == livesync.KindChunk {
			fetched.top[doc.ID] = doc.Data
			src.put(doc.ID, doc.Data)
		}
	}
	for i, n := range notes {
		if errors.Is(errs[i], livesync.ErrMissingChunks) {
			b, err := n.Read(fetched)
			texts[i], errs[i] = string(b), err
		}
	}
	return texts, errs, nil
}

// notesOf is the notes of docs, in order.
func notesOf(docs []livesync.Doc) []*livesync.Note {
	notes := make([]*livesync.Note, len(docs))
	for i, d := range docs {
		notes[i] = d.Note
	}
	return notes
}

// overlay is a ChunkSource that looks in top first.
type overlay struct {
	top   livesync.ChunkMap
	under livesync.ChunkSource
}

func (o overlay) Chunks(ids []string) (map[string]string, error) {
	under, err := o.under.Chunks(ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		if data, ok := o.top[id]; ok {
			out[id] = data
		} else if data, ok := under[id]; ok {
			out[id] = data
		}
	}
	return out, nil
}

// waitable reports a note that is not readable yet: chunks not (or no
// longer) visible, or a size that does not match (written mid-way).
func waitable(err error) bool {
	return errors.Is(err, livesync.ErrMissingChunks) || errors.Is(err, livesync.ErrSizeMismatch)
}

// reason is the note_status text for a waitable error.
func reason(err error) string {
	var missing *livesync.MissingChunksError
	if errors.As(err, &missing) {
		return fmt.Sprintf("%d missing chunks: %s", len(missing.IDs), missing.IDs[0])
	}
	return "size mismatch: incomplete or mid-write"
}

func noteInput(d livesync.Doc, text string) vault.NoteInput {
	mtime := d.Note.Mtime
	if mtime.IsZero() {
		mtime = d.Note.Ctime
	}
	if mtime.IsZero() {
		mtime = time.UnixMilli(0)
	}
	return vault.NoteInput{Path: d.Note.Path, SourceID: d.ID, Rev: d.Rev, Text: text, MTime: mtime}
}
