package bench

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

// backlogText reads an index of another model than USE-lite, classified
// with the generated vault's personal paths, without touching it: the
// text still waiting is what its own store says, and its space stays.
func TestBacklogTextOfAnotherModelsIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "e5.db")
	open := func() *index.Store {
		t.Helper()
		s, err := index.Open(ctx, index.Options{Path: path, Space: e5Small.space,
			Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	store := open()
	notes := Generate(30)
	apply := func(from, to int) {
		t.Helper()
		var b index.Batch
		for _, n := range notes[from:to] {
			b.Upserts = append(b.Upserts, vault.NoteInput{Path: n.Path, Rev: "1", Text: n.Text})
		}
		if _, err := store.Feed().Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	apply(0, 20)
	if _, err := vectorizer.New(store.Vectors(), hashEmbedder{e5Small.space.Dim}, vectorizer.Options{Logger: quiet}).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	apply(20, len(notes))
	pending, err := store.Vectors().Backlog(ctx, math.MaxInt32, math.MaxInt32)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, p := range pending {
		want += int64(len(p.Text))
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := backlogText(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || want == 0 {
		t.Errorf("backlogText = %d bytes, want the %d bytes of the %d chunks waiting", got, want, len(pending))
	}
	store = open()
	defer store.Close()
	if sp := store.Search().ActiveSpace(); sp != e5Small.space {
		t.Errorf("the index's space is %v after backlogText, want %v", sp, e5Small.space)
	}
	if again, err := store.Vectors().Backlog(ctx, math.MaxInt32, math.MaxInt32); err != nil || len(again) != len(pending) {
		t.Errorf("after backlogText %d chunks wait (%v), want %d", len(again), err, len(pending))
	}
}
