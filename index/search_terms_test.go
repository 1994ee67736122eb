package index

import (
	"context"
	"fmt"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// TermRows counts chunks per scope: a word only personal notes hold is
// absent for a caller that sees open notes only, however many personal
// chunks hold it, and adding personal notes changes no open count; a
// prefix counts every word it begins.
func TestTermRowsByScope(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	var notes []vault.NoteInput
	for i := range 12 {
		notes = append(notes, note(fmt.Sprintf("Private/Diary %02d.md", i), "# Diary\nThe zebrafinch sang again; plugins failed."))
	}
	notes = append(notes, note("Recipes/Bread.md", "# Bread\nBake the loaf; the plugin for timers helps."), note("Recipes/Cake.md", "# Cake\nBake the sponge."))
	mustApply(t, s, upserts(notes...))
	terms := []string{"zebrafinch", "bake", "plugi*", "nothere", "!!"}
	read := func(scope vault.Scope) ([]int64, int64) {
		t.Helper()
		rows, total, err := s.Search().TermRows(ctx, terms, scope)
		if err != nil {
			t.Fatal(err)
		}
		return rows, total
	}
	all, allTotal := read(vault.ScopeAll)
	if all[0] != 12 || all[1] != 2 || all[2] != 13 || all[3] != 0 || all[4] != 0 || allTotal != 14 {
		t.Fatalf("all scope: rows %v of %d; want [12 2 13 0 0] of 14 (the premise: personal chunks hold the words)", all, allTotal)
	}
	open, openTotal := read(vault.ScopeOpen)
	if open[0] != 0 || open[1] != 2 || open[2] != 1 || openTotal != 2 {
		t.Fatalf("open scope: rows %v of %d; want [0 2 1 0 0] of 2", open, openTotal)
	}
	var zero vault.Scope
	if got, total := read(zero); got[0] != 0 || total != 2 {
		t.Fatalf("zero scope: rows %v of %d, counted personal chunks", got, total)
	}
	mustApply(t, s, upserts(note("Private/More.md", "# More\nA zebrafinch, a plugin, a bake.")))
	if again, total := read(vault.ScopeOpen); fmt.Sprint(again) != fmt.Sprint(open) || total != openTotal {
		t.Fatalf("open scope after a personal note was added: rows %v of %d, was %v of %d", again, total, open, openTotal)
	}
	if after, _ := read(vault.ScopeAll); after[0] != 13 {
		t.Fatalf("all scope after a write: zebrafinch in %d chunks, want 13 (a count remembered past the write)", after[0])
	}
}
