package index

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// morePersonal is the number of personal notes these tests put ahead of
// the open ones: more than any limit the reads they test apply (10
// namesakes, a page of 5), so a filter applied after the limit leaves an
// open-only read short or empty.
const morePersonal = 12

// limitVault holds morePersonal personal notes named Bread, each with a
// shorter path than any open one, so they come first however a read ranks
// namesakes or paths, then open notes: Bread itself, and a namesake in a
// longer folder.
func limitVault(t *testing.T) *Store {
	t.Helper()
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"D/**"}}})
	var notes []vault.NoteInput
	for i := range morePersonal {
		notes = append(notes, note(fmt.Sprintf("D/%02d/Bread.md", i), "# Bread\n\nA private loaf.\n"))
	}
	notes = append(notes,
		note("Recipes/Bread.md", "# Bread\n\nKnead it.\n"),
		note("Recipes/Old recipes kept for reference/Bread.md", "# Old bread\n\nStale.\n"),
		note("Recipes/Scones.md", "# Scones\n\nRub the butter in.\n"),
		note("Recipes/Soda bread.md", "# Soda bread\n\nNo yeast.\n"),
	)
	mustApply(t, s, upserts(notes...))
	return s
}

func docPaths(docs []vault.Doc) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Path)
	}
	return out
}

// More personal namesakes than ResolveNote lists, all ahead of the open
// one: under ScopeOpen the open namesake is still the alternative, and a
// bare name resolves to the open note, not to nothing.
func TestResolveNoteMorePersonalNamesakesThanTheLimit(t *testing.T) {
	s := limitVault(t)
	ctx := context.Background()
	const openAlt = "Recipes/Old recipes kept for reference/Bread.md"

	// The premise: with the whole vault the alternatives are cut at the
	// limit, and personal namesakes fill it.
	_, all, err := s.Browse().ResolveNote(ctx, "Recipes/Bread.md", vault.ScopeAll)
	if err != nil || len(all) != 10 || slices.Contains(docPaths(all), openAlt) {
		t.Fatalf("ScopeAll alternatives = %v, %v; want the 10 shortest, all personal, the open namesake cut", docPaths(all), err)
	}
	if all[0].Sensitivity != vault.SensitivityPersonal {
		t.Fatalf("ScopeAll's first alternative %s is not personal: the test proves nothing", all[0].Path)
	}

	best, alts, err := s.Browse().ResolveNote(ctx, "Recipes/Bread.md", vault.ScopeOpen)
	if err != nil || best.Path != "Recipes/Bread.md" {
		t.Fatalf("ResolveNote(Recipes/Bread.md, open) = %q, %v", best.Path, err)
	}
	if got := docPaths(alts); !slices.Equal(got, []string{openAlt}) {
		t.Errorf("open alternatives = %v, want [%s]", got, openAlt)
	}
	best, alts, err = s.Browse().ResolveNote(ctx, "bread", vault.ScopeOpen)
	if err != nil || best.Path != "Recipes/Bread.md" || !slices.Equal(docPaths(alts), []string{openAlt}) {
		t.Errorf("ResolveNote(bread, open) = %q, %v, %v; want Recipes/Bread.md with [%s]", best.Path, docPaths(alts), err, openAlt)
	}
	if best, _, err := s.Browse().ResolveNote(ctx, "bread", vault.ScopeAll); err != nil || best.Sensitivity != vault.SensitivityPersonal {
		t.Errorf("ResolveNote(bread, all) = %q (%s), %v; want a personal note, the premise of the open case", best.Path, best.Sensitivity, err)
	}
}

// More personal notes than a page, all listed before the open ones: an
// open-only page is full of open notes, paging by offset and by path
// reaches every open note once, and the total counts the open notes only.
func TestNoteListMorePersonalThanAPage(t *testing.T) {
	s := limitVault(t)
	ctx := context.Background()
	const page = 5
	all, total, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll, Limit: page})
	if err != nil || total != morePersonal+4 || len(all) != page {
		t.Fatalf("ScopeAll: %d of %d, %v", len(all), total, err)
	}
	for _, e := range all {
		if e.Sensitivity != vault.SensitivityPersonal {
			t.Fatalf("ScopeAll's first page lists open %s: the test proves nothing", e.Path)
		}
	}
	want := []string{"Recipes/Bread.md", "Recipes/Old recipes kept for reference/Bread.md", "Recipes/Scones.md", "Recipes/Soda bread.md"}
	var byOffset, byPath []string
	for off := 0; off < 2*page; off += 2 {
		entries, total, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeOpen, Offset: off, Limit: 2})
		if err != nil || total != len(want) {
			t.Fatalf("ScopeOpen offset %d: %d in all, %v; want %d", off, total, err, len(want))
		}
		for _, e := range entries {
			byOffset = append(byOffset, e.Path)
		}
	}
	after := ""
	for range 2 * page {
		entries, _, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeOpen, After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			break
		}
		for _, e := range entries {
			byPath = append(byPath, e.Path)
		}
		after = entries[len(entries)-1].Path
	}
	if !slices.Equal(byOffset, want) || !slices.Equal(byPath, want) {
		t.Errorf("open notes paged by offset %v, by path %v; want %v", byOffset, byPath, want)
	}
	first, _, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeOpen, Limit: 3})
	if err != nil || len(first) != 3 {
		t.Errorf("the first open page of 3: %d notes, %v", len(first), err)
	}
}
