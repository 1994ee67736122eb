package feed

import (
	"errors"
	"sort"
	"time"

	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// parkedNote is a note revision that could not be read whole yet.
type parkedNote struct {
	doc     livesync.Doc
	missing []string // chunk ids it waits for
	reason  string
	state   string // vault.StatusPending or vault.StatusIncomplete
	since   time.Time
	delay   time.Duration // before the next timed retry
	next    time.Time     // the next timed retry; zero once incomplete
}

// parking holds what the follower knows of the notes that have a row in
// note_status: the note revisions that could not be read whole yet (their
// chunks not visible, or a size that does not match the text), the chunks
// they wait for and when each is due to be read again, and the documents
// skipped for good. A parked note is read again when one of its chunks
// arrives and on a timer that doubles from retry; after timeout it is
// reported incomplete and waits for its chunks only. It keeps no clock: the
// follower passes the time in.
type parking struct {
	retry, timeout time.Duration
	notes          map[string]*parkedNote
	waiting        map[string]map[string]bool // chunk id → ids of the notes waiting for it
	skipped        map[string]bool            // ids of the documents skipped
}

func newParking(retry, timeout time.Duration) *parking {
	p := &parking{retry: retry, timeout: timeout}
	p.clear()
	return p
}

// clear forgets everything, as a full reconcile rewrites note_status.
func (p *parking) clear() {
	p.notes, p.waiting, p.skipped = map[string]*parkedNote{}, map[string]map[string]bool{}, map[string]bool{}
}

// restore takes over the rows of note_status, the waiting ones due at once:
// a restart reads them again. It returns how many notes wait.
func (p *parking) restore(sts []index.NoteStatus, now time.Time) int {
	n := 0
	for _, st := range sts {
		if st.State == vault.StatusSkipped {
			p.skipped[st.SourceID] = true
			continue
		}
		n++
		p.notes[st.SourceID] = &parkedNote{
			doc:   livesync.Doc{ID: st.SourceID, Rev: st.Rev, Kind: livesync.KindNote, Note: &livesync.Note{Path: st.Path}},
			state: st.State, reason: st.Reason, since: st.Since, delay: p.retry, next: now,
		}
	}
	return n
}

// has reports whether id has a row in note_status: parked or skipped.
func (p *parking) has(id string) bool { return p.notes[id] != nil || p.skipped[id] }

// waitingFor are the ids of the notes waiting for chunk.
func (p *parking) waitingFor(chunk string) []string {
	var ids []string
	for id := range p.waiting[chunk] {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// due are the ids of the pending notes whose timed retry is due at now, or
// of every parked note with all.
func (p *parking) due(now time.Time, all bool) []string {
	var ids []string
	for id, pn := range p.notes {
		if all || (!pn.next.IsZero() && !now.Before(pn.next)) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// nextDue is when the earliest timed retry is due; zero for none.
func (p *parking) nextDue() time.Time {
	var next time.Time
	for _, pn := range p.notes {
		if !pn.next.IsZero() && (next.IsZero() || pn.next.Before(next)) {
			next = pn.next
		}
	}
	return next
}

// park is what parking note d, unreadable with err at now, makes of it: a
// newer revision than the one parked starts over, the same one keeps its
// first time and retry delay. expired reports the moment it turns
// incomplete; changed, a status row to write. Nothing is stored until put.
func (p *parking) park(d livesync.Doc, err error, now time.Time) (pn *parkedNote, changed, expired bool) {
	prev := p.notes[d.ID]
	pn = &parkedNote{doc: d, reason: reason(err), state: vault.StatusPending, since: now, delay: p.retry}
	var missing *livesync.MissingChunksError
	if errors.As(err, &missing) {
		pn.missing = missing.IDs
	}
	if prev != nil && prev.doc.Rev == d.Rev {
		pn.since, pn.state, pn.delay = prev.since, prev.state, prev.delay
	}
	deadline := pn.since.Add(p.timeout)
	if pn.state == vault.StatusPending && !now.Before(deadline) {
		pn.state, expired = vault.StatusIncomplete, true
	}
	if pn.state == vault.StatusPending {
		pn.next = now.Add(pn.delay)
		if pn.next.After(deadline) {
			pn.next = deadline
		}
		pn.delay *= 2
	}
	changed = prev == nil || prev.doc.Rev != d.Rev || prev.state != pn.state || prev.reason != pn.reason
	return pn, changed, expired
}

// put stores a note park returned.
func (p *parking) put(id string, pn *parkedNote) {
	p.unpark(id)
	delete(p.skipped, id)
	p.notes[id] = pn
	for _, c := range pn.missing {
		if p.waiting[c] == nil {
			p.waiting[c] = map[string]bool{}
		}
		p.waiting[c][id] = true
	}
}

// skip records that id is skipped for good.
func (p *parking) skip(id string) {
	p.unpark(id)
	p.skipped[id] = true
}

// settle forgets id: it is indexed or deleted, and its status row goes.
func (p *parking) settle(id string) {
	p.unpark(id)
	delete(p.skipped, id)
}

func (p *parking) unpark(id string) {
	pn, ok := p.notes[id]
	if !ok {
		return
	}
	delete(p.notes, id)
	for _, c := range pn.missing {
		delete(p.waiting[c], id)
		if len(p.waiting[c]) == 0 {
			delete(p.waiting, c)
		}
	}
}

// counts are the parked notes and, among them, the incomplete ones.
func (p *parking) counts() (parked, incomplete int) {
	for _, pn := range p.notes {
		if pn.state == vault.StatusIncomplete {
			incomplete++
		}
	}
	return len(p.notes), incomplete
}
