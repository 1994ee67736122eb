package index

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/vault"
)

// checkpoints is every source's checkpoint: source → "since identity".
func checkpoints(tb testing.TB, s *Store) map[string]string {
	tb.Helper()
	rows, err := s.db().Query(`SELECT source, since, identity FROM feed_state`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var source, since, identity string
		if err := rows.Scan(&source, &since, &identity); err != nil {
			tb.Fatal(err)
		}
		out[source] = since + " " + identity
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// A source that names itself anew takes the checkpoint saved last under a
// name it had, with its identity; one it never had, or a checkpoint under
// its new name already, stay as they are.
func TestAdoptCheckpoint(t *testing.T) {
	ctx := context.Background()
	former := func(name string) bool { return strings.HasPrefix(name, "old ") }
	s := mustOpen(t, Options{})
	for _, b := range []Batch{
		{Source: "old a", Checkpoint: "7", Identity: "setup 1"},
		{Source: "old b", Checkpoint: "9", Identity: "setup 2"},
		{Source: "other", Checkpoint: "40"},
	} {
		mustApply(t, s, b)
	}
	for name, at := range map[string]int{"old a": 1000, "old b": 2000, "other": 3000} {
		if _, err := s.db().Exec(`UPDATE feed_state SET updated_at = ? WHERE source = ?`, at, name); err != nil {
			t.Fatal(err)
		}
	}
	from, err := s.Feed().AdoptCheckpoint(ctx, "new", former)
	if err != nil || from != "old b" {
		t.Fatalf("AdoptCheckpoint = %q, %v; want the one saved last, old b", from, err)
	}
	want := map[string]string{"old a": "7 setup 1", "new": "9 setup 2", "other": "40 "}
	if diff := cmp.Diff(want, checkpoints(t, s)); diff != "" {
		t.Fatalf("checkpoints (-want +got):\n%s", diff)
	}
	if st, ok, err := s.Feed().Checkpoint(ctx, "new"); err != nil || !ok || st != (FeedState{Since: "9", Identity: "setup 2"}) {
		t.Fatalf("Checkpoint(new) = %+v %v %v", st, ok, err)
	}
	if from, err := s.Feed().AdoptCheckpoint(ctx, "new", former); err != nil || from != "" {
		t.Fatalf("AdoptCheckpoint with a checkpoint under the name = %q, %v; want nothing moved", from, err)
	}
	if from, err := s.Feed().AdoptCheckpoint(ctx, "fresh", func(string) bool { return false }); err != nil || from != "" {
		t.Fatalf("AdoptCheckpoint with no former name = %q, %v", from, err)
	}
	if diff := cmp.Diff(want, checkpoints(t, s)); diff != "" {
		t.Fatalf("checkpoints after adopting nothing (-want +got):\n%s", diff)
	}
}

// The checkpoint that ends a full sync (Sole) is the index's only one.
func TestSoleCheckpointDropsTheOthers(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, Batch{Source: "a", Checkpoint: "3"})
	mustApply(t, s, Batch{Source: "b", Checkpoint: "5", Identity: "setup"})
	mustApply(t, s, Batch{Source: "b", Checkpoint: "6"})
	if diff := cmp.Diff(map[string]string{"a": "3 ", "b": "6 setup"}, checkpoints(t, s)); diff != "" {
		t.Fatalf("checkpoints (-want +got):\n%s", diff)
	}
	mustApply(t, s, Batch{Upserts: []vault.NoteInput{note("n.md", "n")}, Source: "b", Checkpoint: "8", Sole: true})
	if diff := cmp.Diff(map[string]string{"b": "8 setup"}, checkpoints(t, s)); diff != "" {
		t.Fatalf("checkpoints after a sole one (-want +got):\n%s", diff)
	}
}
