package feed

import (
	"context"
	"sort"
	"time"

	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// change is the last thing a batch says about one _id.
type change struct {
	doc livesync.Doc // KindNote or KindTombstone
	at  int          // position of the row that set it
}

// applyRows decodes a batch of rows and commits it with the last row's
// sequence as the checkpoint. A chunk that arrives re-reads the parked notes
// waiting for it.
func (f *Follower) applyRows(ctx context.Context, batch []feedRow) error {
	changes := map[string]change{}
	retry := map[string]bool{}
	for i, r := range batch {
		doc, err := f.couch.dec.Decode(r.doc)
		if err != nil {
			if fatalDecode(err) {
				return fatal(f.couch.decodeError(err))
			}
			f.log.Warn("skip malformed document", keyID, r.id, keySeq, r.seq, keyErr, err)
			if doc.Kind == livesync.KindNote {
				changes[r.id] = change{doc: livesync.Doc{ID: r.id, Rev: doc.Rev, Kind: livesync.KindNote, Reason: "unreadable document: " + err.Error()}, at: i}
			}
			continue
		}
		switch doc.Kind {
		case livesync.KindChunk:
			f.chunks.put(doc.ID, doc.Data)
			for _, id := range f.parking.waitingFor(doc.ID) {
				retry[id] = true
			}
		case livesync.KindChunkTombstone:
			f.chunks.evict(doc.ID)
		case livesync.KindNote, livesync.KindTombstone:
			changes[doc.ID] = change{doc: doc, at: i}
		case livesync.KindSkip:
			if doc.Version > livesync.FormatVersion && !f.warnedVersion {
				f.warnedVersion = true
				f.couch.warnNewerFormat(doc.Version)
			}
		}
	}
	ordered := make([]change, 0, len(changes))
	for _, c := range changes {
		ordered = append(ordered, c)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].at < ordered[j].at })
	docs := make([]livesync.Doc, len(ordered))
	for i, c := range ordered {
		docs[i] = c.doc
	}
	ids := make([]string, 0, len(retry))
	for id := range retry {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if pn, ok := f.parking.notes[id]; ok {
			if _, again := changes[id]; !again {
				docs = append(docs, pn.doc)
			}
		}
	}
	return f.commit(ctx, docs, batch[len(batch)-1].seq, len(batch))
}

// retryParked reads the parked notes that are due again (all of them when
// all is set), fetching each note's current revision by key.
func (f *Follower) retryParked(ctx context.Context, all bool) error {
	ids := f.parking.due(f.clock.Now(), all)
	if len(ids) == 0 {
		return nil
	}
	raws, err := f.couch.fetch(ctx, ids)
	if err != nil {
		return err
	}
	var docs []livesync.Doc
	for _, id := range ids {
		raw, ok := raws[id]
		if !ok {
			docs = append(docs, livesync.Doc{ID: id, Kind: livesync.KindTombstone})
			continue
		}
		doc, err := f.couch.dec.Decode(raw)
		if err != nil {
			if fatalDecode(err) {
				return fatal(f.couch.decodeError(err))
			}
			doc = livesync.Doc{ID: id, Kind: livesync.KindTombstone}
		}
		if doc.Kind != livesync.KindNote {
			doc.Kind = livesync.KindTombstone
		}
		docs = append(docs, doc)
	}
	return f.commit(ctx, docs, f.since, 0)
}

// commit turns the notes and tombstones of a batch into one Apply with the
// checkpoint, after recording in note_status the notes that must wait or
// are skipped. The follower's maps change only once the transaction is
// committed.
func (f *Follower) commit(ctx context.Context, docs []livesync.Doc, checkpoint string, rows int) error {
	p := newBatchPlan(f)
	reads := p.sort(docs)
	texts, errs, err := f.couch.readNotes(ctx, notesOf(reads), f.chunks)
	if err != nil {
		return err
	}
	now := f.clock.Now()
	for i, d := range reads {
		p.read(d, texts[i], errs[i], now)
	}
	if len(p.status)+len(p.clear) > 0 {
		if err := f.store.SetNoteStatus(ctx, p.status, p.clear); err != nil {
			return fatal(err)
		}
	}
	batch := p.batch(index.Batch{Source: f.couch.source, Checkpoint: checkpoint, Identity: f.identity})
	if rows == 0 && len(batch.Upserts)+len(batch.Deletes) == 0 {
		p.apply()
		f.countParked()
		return nil
	}
	res, err := f.store.Apply(ctx, batch)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fatal(err)
	}
	f.since = checkpoint
	p.apply()
	f.countParked()
	f.committed(res, checkpoint, rows, now)
	return nil
}

// committed counts a committed transaction in the stats, logs it and tells
// OnBatch.
func (f *Follower) committed(res index.ApplyResult, checkpoint string, rows int, now time.Time) {
	f.withStats(func(s *FollowerStats) {
		s.Checkpoint = checkpoint
		// The database is at least at the sequence it just delivered.
		if at, ok := seqNumber(checkpoint); ok {
			if db, ok := seqNumber(s.UpdateSeq); !ok || at > db {
				s.UpdateSeq = checkpoint
			}
		}
		s.Rows += rows
		s.Batches++
		counts := res
		counts.Notes = nil // the stats count; OnBatch has the notes
		s.Applied = s.Applied.Add(counts)
		s.CachedChunks = f.chunks.len()
		if res.Written() {
			s.LastChangeAt = now
		}
	})
	if res.Written() {
		f.log.Debug("applied changes", keyCount, rows, keyAdded, res.Added, keyChanged, res.Changed, keyRemoved, res.Deleted, keySeq, checkpoint)
	}
	if f.opts.OnBatch != nil {
		f.opts.OnBatch(BatchResult{ApplyResult: res, Rows: rows, Checkpoint: checkpoint, Parked: len(f.parking.notes)})
	}
}

// batchPlan is what one batch does to the index and to the follower's maps;
// the maps see it only after the transaction commits.
type batchPlan struct {
	f       *Follower
	owner   map[string]string // DocID → _id, "" for none: overrides f.owner
	idPath  map[string]string
	upserts map[string]vault.NoteInput // by DocID
	deletes map[string]string          // DocID → path
	park    map[string]*parkedNote
	settled map[string]bool // ids whose status row goes
	skipped map[string]bool // ids skipped by this batch
	status  []index.NoteStatus
	clear   []string
}

func newBatchPlan(f *Follower) *batchPlan {
	return &batchPlan{f: f, owner: map[string]string{}, idPath: map[string]string{}, upserts: map[string]vault.NoteInput{},
		deletes: map[string]string{}, park: map[string]*parkedNote{}, settled: map[string]bool{}, skipped: map[string]bool{}}
}

// sort plans the tombstones, deletions and skipped notes of docs and
// returns the notes left to read.
func (p *batchPlan) sort(docs []livesync.Doc) (reads []livesync.Doc) {
	for _, d := range docs {
		switch {
		case d.Kind == livesync.KindTombstone:
			p.remove(d.ID, p.pathOf(d.ID))
		case d.Note == nil:
			p.remove(d.ID, p.pathOf(d.ID))
			p.skip(d.ID, d.ID, d.Rev, d.Reason)
		case d.Note.Deleted:
			p.remove(d.ID, d.Note.Path)
		default:
			if why := p.f.couch.skipReason(d.Note); why != "" {
				p.remove(d.ID, p.pathOf(d.ID))
				p.skip(d.ID, d.Note.Path, d.Rev, why)
				continue
			}
			reads = append(reads, d)
		}
	}
	return reads
}

// read plans a note by how reading it went: indexed when read whole,
// parked when it must wait for chunks, else skipped as unreadable.
func (p *batchPlan) read(d livesync.Doc, text string, err error, now time.Time) {
	switch {
	case err == nil:
		p.upsert(d, text)
	case waitable(err):
		p.parkNote(d, err, now)
	default:
		p.f.log.Warn("note unreadable: not indexed", keyPath, d.Note.Path, keyRev, d.Rev, keyErr, err)
		p.skip(d.ID, d.Note.Path, d.Rev, "unreadable: "+err.Error())
	}
}

// batch is b with the plan's upserts and deletes, in path order.
func (p *batchPlan) batch(b index.Batch) index.Batch {
	for _, n := range p.upserts {
		b.Upserts = append(b.Upserts, n)
	}
	sort.Slice(b.Upserts, func(i, j int) bool { return b.Upserts[i].Path < b.Upserts[j].Path })
	for _, path := range p.deletes {
		b.Deletes = append(b.Deletes, path)
	}
	sort.Strings(b.Deletes)
	return b
}

func (p *batchPlan) ownerOf(key string) string {
	if id, ok := p.owner[key]; ok {
		return id
	}
	return p.f.owner[key]
}

func (p *batchPlan) pathOf(id string) string {
	if path, ok := p.idPath[id]; ok {
		return path
	}
	return p.f.idPath[id]
}

// remove deletes the note id had at path, unless another document's note is
// indexed there (two documents can claim one path; FORMAT.md §2).
func (p *batchPlan) remove(id, path string) {
	p.settle(id)
	if path == "" {
		return
	}
	p.idPath[id] = path
	key := vault.DocID(path)
	if owner := p.ownerOf(key); owner != "" && owner != id {
		return
	}
	p.owner[key] = ""
	delete(p.upserts, key)
	p.deletes[key] = path
}

// upsert indexes a note read whole. Of two documents that claim one path,
// the one whose id LiveSync derives from the path keeps it; otherwise the
// later one wins.
func (p *batchPlan) upsert(d livesync.Doc, text string) {
	p.settle(d.ID)
	path := d.Note.Path
	key := vault.DocID(path)
	if owner := p.ownerOf(key); owner != "" && owner != d.ID && p.f.couch.derivedID(path) == owner {
		p.f.log.Debug("a stale document claims an indexed path; ignored", keyID, d.ID, keyPath, path)
		return
	}
	if old := p.pathOf(d.ID); old != "" && vault.DocID(old) != key {
		p.remove(d.ID, old)
	}
	p.idPath[d.ID] = path
	p.owner[key] = d.ID
	delete(p.deletes, key)
	p.upserts[key] = noteInput(d, text)
}

// parkNote keeps a note that could not be read whole until its chunks
// arrive; a newer revision replaces an older parked one and starts over.
func (p *batchPlan) parkNote(d livesync.Doc, err error, now time.Time) {
	pn, changed, expired := p.f.parking.park(d, err, now)
	if expired {
		p.f.log.Warn("note incomplete: its chunks did not arrive in time; not indexed", keyPath, d.Note.Path, keyID, d.ID, keyRev, d.Rev,
			keyReason, pn.reason, keyElapsed, now.Sub(pn.since).Round(time.Second))
	}
	delete(p.settled, d.ID)
	delete(p.skipped, d.ID)
	p.park[d.ID] = pn
	p.idPath[d.ID] = d.Note.Path
	if changed {
		p.status = append(p.status, index.NoteStatus{SourceID: d.ID, Path: d.Note.Path, Rev: d.Rev, State: pn.state, Reason: pn.reason, Since: pn.since})
	}
}

// settle records that id is neither parked nor skipped any more: any status
// row it had goes.
func (p *batchPlan) settle(id string) {
	delete(p.park, id)
	delete(p.skipped, id)
	if p.f.parking.has(id) && !p.settled[id] {
		p.settled[id] = true
		p.clear = append(p.clear, id)
	}
}

// skip records that id (at path, revision rev) is not indexed, and why.
func (p *batchPlan) skip(id, path, rev, reason string) {
	p.settle(id)
	delete(p.settled, id)
	p.skipped[id] = true
	p.status = append(p.status, index.NoteStatus{SourceID: id, Path: path, Rev: rev, State: vault.StatusSkipped, Reason: reason})
}

// apply moves the committed plan into the follower's maps.
func (p *batchPlan) apply() {
	f := p.f
	for key, id := range p.owner {
		if id == "" {
			delete(f.owner, key)
		} else {
			f.owner[key] = id
		}
	}
	for id, path := range p.idPath {
		f.idPath[id] = path
	}
	for id := range p.settled {
		f.parking.settle(id)
	}
	for id := range p.skipped {
		f.parking.skip(id)
	}
	for id, pn := range p.park {
		f.parking.put(id, pn)
	}
}
