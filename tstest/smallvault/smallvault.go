package smallvault

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// PersonalMark is a word only personal notes hold.
const PersonalMark = "zebrafinch"

// Open is a small real index: open notes under Recipes/, personal ones
// under Diary/ that match every question better, and a topic note, 99
// topics/Baking, collecting two open notes and a personal one.
func Open(tb testing.TB) *index.Store {
	tb.Helper()
	ctx := context.Background()
	s, err := index.Open(ctx, index.Options{
		Path:        filepath.Join(tb.TempDir(), "index.db"),
		Space:       vault.EmbeddingSpace{Model: "test/none", Dim: 4},
		Sensitivity: index.Classifier{PersonalPaths: []string{"Diary/**"}},
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	notes := []vault.NoteInput{
		Note("Recipes/Sourdough bread.md", "# Sourdough bread\n\nKnead the dough for ten minutes, then let it rise overnight.\n\nSee [[Starter]].\n"),
		Note("Recipes/Starter.md", "# Starter\n\nFeed the starter daily with flour and water.\n"),
		Note("Recipes/Bread.md", "# Bread\n\nA plain loaf.\n"),
		Note("99 topics/Baking.md", "# Baking\n\n<!-- begin:clippings -->\n[[Sourdough bread]]\n[[Starter]]\n[[Diary/Bread]]\n<!-- end:clippings -->\n"),
	}
	for _, n := range []string{"Bread", "Dough diary", "Knead log"} {
		notes = append(notes, Note("Diary/"+n+".md", "# "+n+"\n\nKnead the dough "+PersonalMark+" sourdough knead dough rise sourdough.\n"))
	}
	if _, err := s.Feed().Apply(ctx, index.Batch{Upserts: notes}); err != nil {
		tb.Fatal(err)
	}
	return s
}

// Note is a note as the feed hands it to the index, first revision.
func Note(path, text string) vault.NoteInput {
	return vault.NoteInput{Path: path, Rev: "1-a", Text: text, MTime: time.Unix(1700000000, 0)}
}

// WithDiary is Open with days more personal notes, Diary/Day NNN, all
// listed before the open Recipes/ notes, and a topic note, 99
// topics/Journal, that collects twelve of them and one open note. open
// are the open notes' paths, in order.
func WithDiary(tb testing.TB, days int) (store *index.Store, open []string) {
	tb.Helper()
	store = Open(tb)
	var notes []vault.NoteInput
	clippings := "# Journal\n\n<!-- begin:clippings -->\n[[Recipes/Starter]]\n"
	for i := range days {
		notes = append(notes, Note(fmt.Sprintf("Diary/Day %03d.md", i), "# Day\n\nKnead "+PersonalMark+".\n"))
		if i < 12 {
			clippings += fmt.Sprintf("[[Diary/Day %03d]]\n", i)
		}
	}
	notes = append(notes, Note("99 topics/Journal.md", clippings+"<!-- end:clippings -->\n"))
	if _, err := store.Feed().Apply(context.Background(), index.Batch{Upserts: notes}); err != nil {
		tb.Fatal(err)
	}
	return store, []string{"99 topics/Baking.md", "99 topics/Journal.md", "Recipes/Bread.md", "Recipes/Sourdough bread.md", "Recipes/Starter.md"}
}
