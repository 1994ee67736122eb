package index

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vaultask/vaultask/vault"
)

func TestNoteStatus(t *testing.T) {
	s := mustOpen(t, Options{})
	ctx := context.Background()
	first := time.UnixMilli(1700000000000)
	later := first.Add(time.Minute)
	list := func() []NoteStatus {
		t.Helper()
		sts, err := s.Feed().NoteStatuses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range sts {
			sts[i].Updated = time.Time{}
		}
		return sts
	}
	a := NoteStatus{SourceID: "a.md", Path: "A.md", Rev: "1-a", State: vault.StatusPending, Reason: "1 missing chunks: h:x", Since: first}
	b := NoteStatus{SourceID: "b.md", Path: "B.md", Rev: "1-b", State: vault.StatusPending, Reason: "size mismatch", Since: first}
	if err := s.Feed().SetNoteStatus(ctx, []NoteStatus{a, b}, nil); err != nil {
		t.Fatal(err)
	}

	// The same revision keeps when it was first parked; a new one starts over.
	a2, b2 := a, b
	a2.State, a2.Since = vault.StatusIncomplete, later
	b2.Rev, b2.Since = "2-b", later
	if err := s.Feed().SetNoteStatus(ctx, []NoteStatus{a2, b2}, nil); err != nil {
		t.Fatal(err)
	}
	a2.Since = first
	if diff := cmp.Diff([]NoteStatus{a2, b2}, list()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}

	if err := s.Feed().SetNoteStatus(ctx, nil, []string{"a.md"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]NoteStatus{b2}, list()); diff != "" {
		t.Fatalf("after clearing a.md (-want +got):\n%s", diff)
	}

	c := NoteStatus{SourceID: "c.md", Path: "C.md", Rev: "1-c", State: vault.StatusIncomplete, Reason: "size mismatch", Since: later}
	b3 := b2
	b3.Since = later.Add(time.Hour)
	if err := s.Feed().ReplaceNoteStatus(ctx, []NoteStatus{b3, c}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]NoteStatus{b2, c}, list()); diff != "" {
		t.Fatalf("after a replace (-want +got):\n%s", diff)
	}

	if err := s.Feed().SetNoteStatus(ctx, []NoteStatus{{SourceID: "d", Path: "D.md", State: "lost"}}, nil); err == nil {
		t.Error("an unknown state was accepted")
	}
	ro := mustOpen(t, Options{Path: s.Path(), ReadOnly: true})
	if err := ro.Feed().SetNoteStatus(ctx, []NoteStatus{a}, nil); !errors.Is(err, errReadOnly) {
		t.Errorf("read-only store: %v, want errReadOnly", err)
	}
	if sts, err := ro.Feed().NoteStatuses(ctx); err != nil || len(sts) != 2 {
		t.Errorf("read-only list: %d, %v", len(sts), err)
	}
}
