package main

import (
	"time"

	"github.com/vaultask/vaultask/feed"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/transport"
	"github.com/vaultask/vaultask/vault"
)

// publishNotes sends an event per note a write added, changed or removed.
func (svc *service) publishNotes(notes []index.NoteChange, seq string) {
	for _, n := range notes {
		svc.events.Publish(noteEvent(n, seq, time.Now()))
	}
}

// noteEvent is the event of a note a write added, changed or removed. A
// client of open notes only hears of open notes alone, without the feed's
// sequence (which personal notes move too), and sees a note that changed
// scope as one that came or went: one that became personal is removed from
// its view, with nothing more said (not its new title, not why), so that a
// page citing it drops the citation; one that became open is new to it.
func noteEvent(n index.NoteChange, seq string, at time.Time) transport.Event {
	stamp := at.UTC().Format(time.RFC3339)
	ev := transport.Event{Type: noteEventType(n.Change), Data: transport.NoteEvent{Path: n.Path, Title: n.Title, Seq: seq, At: stamp}}
	open := openChange(n)
	switch {
	case open == "":
		return ev
	case open == index.ChangeRemoved && n.Change == index.ChangeChanged:
		ev.OpenData = transport.NoteEvent{Path: n.Path, At: stamp}
	default:
		ev.OpenData = transport.NoteEvent{Path: n.Path, Title: n.Title, At: stamp}
	}
	if t := noteEventType(open); t != ev.Type {
		ev.OpenType = t
	}
	return ev
}

func noteEventType(change string) string {
	switch change {
	case index.ChangeChanged:
		return transport.EventNoteReindexed
	case index.ChangeRemoved:
		return transport.EventNoteRemoved
	}
	return transport.EventNoteIndexed
}

// openChange is what a change did to the view of open notes only: added,
// changed or removed there, or "" when that view never saw the note.
func openChange(n index.NoteChange) string {
	open := n.Sensitivity == vault.SensitivityOpen
	if n.Change != index.ChangeChanged {
		if open {
			return n.Change
		}
		return ""
	}
	switch wasOpen := n.WasSensitivity == vault.SensitivityOpen; {
	case open && wasOpen:
		return index.ChangeChanged
	case open:
		return index.ChangeAdded
	case wasOpen:
		return index.ChangeRemoved
	}
	return ""
}

// publishReconcile sends the event of a LiveSync vault's full reconcile,
// after those of the notes it wrote.
func (svc *service) publishReconcile(r feed.ReconcileResult) {
	svc.publishNotes(r.Sync.Notes, r.Since)
	svc.events.Publish(transport.Event{Type: transport.EventReconcileDone, Data: map[string]any{
		"notes": r.Notes, "added": r.Sync.Added, "changed": r.Sync.Changed, "removed": r.Sync.Deleted,
		"incomplete": len(r.Incomplete), "skipped": len(r.Skipped), "seq": r.Since},
		OpenData: openChanges(r.Sync.Notes)})
}

// openChanges counts the notes a reconcile added to, changed in and removed
// from the view of open notes only: what its event tells such a client.
func openChanges(notes []index.NoteChange) map[string]int {
	out := map[string]int{index.ChangeAdded: 0, index.ChangeChanged: 0, index.ChangeRemoved: 0}
	for _, n := range notes {
		if c := openChange(n); c != "" {
			out[c]++
		}
	}
	return out
}
