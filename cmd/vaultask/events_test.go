package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/transport"
)

// What each change of a note tells the whole vault's clients and the
// clients of open notes only.
func TestNoteEvents(t *testing.T) {
	at := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	const stamp = "2026-12-04T08:00:00Z"
	change := func(kind, sens, was string) index.NoteChange {
		return index.NoteChange{Change: kind, Path: "N.md", Title: "T", Sensitivity: sens, WasSensitivity: was}
	}
	full := transport.NoteEvent{Path: "N.md", Title: "T", Seq: "9", At: stamp}
	open := transport.NoteEvent{Path: "N.md", Title: "T", At: stamp}
	for _, tc := range []struct {
		name   string
		change index.NoteChange
		want   transport.Event
		counts map[string]int // what a reconcile's event counts for open-only clients
	}{
		{"open note added", change(index.ChangeAdded, "open", ""),
			transport.Event{Type: "note.indexed", Data: full, OpenData: open}, map[string]int{"added": 1}},
		{"personal note added", change(index.ChangeAdded, "personal", ""),
			transport.Event{Type: "note.indexed", Data: full}, nil},
		{"open note changed", change(index.ChangeChanged, "open", "open"),
			transport.Event{Type: "note.reindexed", Data: full, OpenData: open}, map[string]int{"changed": 1}},
		{"personal note changed", change(index.ChangeChanged, "personal", "personal"),
			transport.Event{Type: "note.reindexed", Data: full}, nil},
		{"open note made personal", change(index.ChangeChanged, "personal", "open"),
			transport.Event{Type: "note.reindexed", Data: full, OpenType: "note.removed", OpenData: transport.NoteEvent{Path: "N.md", At: stamp}}, map[string]int{"removed": 1}},
		{"personal note made open", change(index.ChangeChanged, "open", "personal"),
			transport.Event{Type: "note.reindexed", Data: full, OpenType: "note.indexed", OpenData: open}, map[string]int{"added": 1}},
		{"open note removed", change(index.ChangeRemoved, "open", ""),
			transport.Event{Type: "note.removed", Data: full, OpenData: open}, map[string]int{"removed": 1}},
		{"personal note removed", change(index.ChangeRemoved, "personal", ""),
			transport.Event{Type: "note.removed", Data: full}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, noteEvent(tc.change, "9", at)); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
			want := map[string]int{"added": 0, "changed": 0, "removed": 0}
			for k, v := range tc.counts {
				want[k] = v
			}
			if diff := cmp.Diff(want, openChanges([]index.NoteChange{tc.change})); diff != "" {
				t.Errorf("open-only reconcile counts (-want +got):\n%s", diff)
			}
		})
	}
}
