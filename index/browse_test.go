package index

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vaultask/vaultask/vault"
)

func notesVault(t *testing.T) *Store {
	t.Helper()
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Diary/**"}}})
	mustApply(t, s, upserts(
		note("Recipes/Bread.md", "---\naliases: [Loaf]\n---\n# Bread\n\nKnead it. Ünïcödé text.\n"),
		note("Old/Bread.md", "# Old bread\n\nStale.\n"),
		note("Diary/Bread.md", "# My bread\n\nA private loaf.\n"),
		note("Diary/Secret.md", "secret\n"),
		note("99 topics/Baking.md", "<!-- begin:clippings -->\n[[Recipes/Bread]]\n[[Diary/Secret]]\n[[Missing]]\n<!-- end:clippings -->\n"),
	))
	return s
}

func TestResolveNote(t *testing.T) {
	s := notesVault(t)
	ctx := context.Background()
	for _, tc := range []struct {
		ref   string
		scope vault.Scope
		want  string
		alts  []string
	}{
		{"Recipes/Bread.md", vault.ScopeAll, "Recipes/Bread.md", []string{"Old/Bread.md", "Diary/Bread.md"}},
		{"recipes/BREAD", vault.ScopeAll, "Recipes/Bread.md", []string{"Old/Bread.md", "Diary/Bread.md"}},
		{"loaf", vault.ScopeAll, "Recipes/Bread.md", []string{"Old/Bread.md", "Diary/Bread.md"}},
		{"Diary/Bread", vault.ScopeAll, "Diary/Bread.md", []string{"Old/Bread.md", "Recipes/Bread.md"}},
		// A personal note neither answers nor shows as an alternative.
		{"Bread", vault.ScopeOpen, "Old/Bread.md", []string{"Recipes/Bread.md"}},
	} {
		d, alts, err := s.Browse().ResolveNote(ctx, tc.ref, tc.scope)
		if err != nil || d.Path != tc.want {
			t.Errorf("ResolveNote(%q, %v) = %q, %v; want %q", tc.ref, tc.scope, d.Path, err, tc.want)
			continue
		}
		var got []string
		for _, a := range alts {
			got = append(got, a.Path)
		}
		if diff := cmp.Diff(tc.alts, got); diff != "" {
			t.Errorf("ResolveNote(%q, %v) alternatives (-want +got):\n%s", tc.ref, tc.scope, diff)
		}
	}
	// A path names its folder: a personal note's path does not fall back to
	// a namesake elsewhere.
	for _, ref := range []string{"Diary/Secret", "secret", "Diary/Secret.md", "Diary/Bread", "nothing", ""} {
		if d, alts, err := s.Browse().ResolveNote(ctx, ref, vault.ScopeOpen); !errors.Is(err, vault.ErrNoNote) || len(alts) != 0 {
			t.Errorf("ResolveNote(%q, open) = %q, %v, %v; want ErrNoNote", ref, d.Path, alts, err)
		}
	}
}

func TestReadNote(t *testing.T) {
	s := notesVault(t)
	ctx := context.Background()
	n, err := s.Browse().ReadNote(ctx, "recipes/bread.md", vault.ScopeAll, 0, 0)
	want := "---\naliases: [Loaf]\n---\n# Bread\n\nKnead it. Ünïcödé text.\n"
	if err != nil || n.Text != want || n.Length != len(want) || n.Title != "Bread" {
		t.Fatalf("ReadNote = %+v, %v", n, err)
	}
	// Pages end at UTF-8 boundaries and add up to the whole.
	var got strings.Builder
	for off := 0; off < len(want); {
		page, err := s.Browse().ReadNote(ctx, "recipes/bread.md", vault.ScopeAll, off, 7)
		if err != nil {
			t.Fatal(err)
		}
		if page.Offset != off || len(page.Text) == 0 {
			t.Fatalf("page at %d = %+v", off, page)
		}
		got.WriteString(page.Text)
		off += len(page.Text)
	}
	if got.String() != want {
		t.Fatalf("pages joined = %q", got.String())
	}
	if _, err := s.Browse().ReadNote(ctx, "diary/secret.md", vault.ScopeOpen, 0, 0); !errors.Is(err, vault.ErrNoNote) {
		t.Fatalf("personal note under ScopeOpen: %v, want ErrNoNote", err)
	}
}

func TestTopicsAndMembers(t *testing.T) {
	s := notesVault(t)
	ctx := context.Background()
	for scope, want := range map[vault.Scope]int{vault.ScopeAll: 2, vault.ScopeOpen: 1} {
		ts, err := s.Browse().Topics(ctx, scope)
		if err != nil || len(ts) != 1 || ts[0].Path != "99 topics/Baking.md" || ts[0].Members != want {
			t.Errorf("Topics(%v) = %+v, %v; want Baking with %d members", scope, ts, err, want)
		}
	}
	nb, err := s.Browse().Neighbours(ctx, []string{"99 topics/baking.md"}, vault.ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, n := range nb {
		if n.Relation == vault.RelationMember {
			members = append(members, n.Doc.Path)
		}
	}
	if diff := cmp.Diff([]string{"Recipes/Bread.md"}, members); diff != "" {
		t.Errorf("members of the topic note, open scope (-want +got):\n%s", diff)
	}
}

func TestNoteList(t *testing.T) {
	s := notesVault(t)
	ctx := context.Background()
	if err := s.Feed().SetNoteStatus(ctx, []NoteStatus{
		{SourceID: "a", Path: "Attachments/pic.png", Rev: "1-a", State: vault.StatusSkipped, Reason: "binary attachment"},
		{SourceID: "b", Path: "Half.md", Rev: "2-b", State: vault.StatusIncomplete, Reason: "1 missing chunks: h:x"},
	}, nil); err != nil {
		t.Fatal(err)
	}
	all, total, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll})
	if err != nil || total != 7 || len(all) != 7 {
		t.Fatalf("NoteList() = %d of %d, %v", len(all), total, err)
	}
	byPath := map[string]vault.NoteEntry{}
	for _, e := range all {
		byPath[e.Path] = e
	}
	if e := byPath["Recipes/Bread.md"]; e.State != vault.StatusIndexed || e.Chunks != 1 || e.Vectors != 0 || e.IndexedAt.IsZero() || e.Title != "Bread" {
		t.Errorf("indexed entry = %+v", e)
	}
	if e := byPath["Half.md"]; e.State != vault.StatusIncomplete || e.Reason != "1 missing chunks: h:x" || e.Since.IsZero() {
		t.Errorf("incomplete entry = %+v", e)
	}
	page, total, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll, State: vault.StatusIndexed, Path: "BREAD", Offset: 1, Limit: 1})
	if err != nil || total != 3 || len(page) != 1 || page[0].Path != "Old/Bread.md" {
		t.Errorf("indexed, path bread, second page = %+v of %d, %v", page, total, err)
	}
	open, total, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeOpen})
	if err != nil || total != 3 || len(open) != 3 {
		t.Fatalf("open scope: %d of %d, %v", len(open), total, err)
	}
	for _, e := range open {
		if e.Sensitivity != vault.SensitivityOpen || e.State != vault.StatusIndexed {
			t.Errorf("open scope lists %+v", e)
		}
	}
	if _, _, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll, State: "broken"}); err == nil {
		t.Error("an unknown state is accepted")
	}
	if got, _, _ := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll, Path: "100%_"}); len(got) != 0 {
		t.Errorf("LIKE wildcards in the path filter match %v", got)
	}
}

// After pages by path from a path on: the notes after it, in order, of the
// scope asked, however many were listed before; total counts them all.
func TestNoteListAfter(t *testing.T) {
	s := notesVault(t)
	ctx := context.Background()
	all, _, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll, State: vault.StatusIndexed})
	if err != nil || len(all) < 3 {
		t.Fatalf("NoteList() = %+v, %v", all, err)
	}
	var paths []string
	for _, e := range all {
		paths = append(paths, e.Path)
	}
	for i, after := range paths {
		page, total, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeAll, State: vault.StatusIndexed, After: after, Limit: 2})
		var got []string
		for _, e := range page {
			got = append(got, e.Path)
		}
		if diff := cmp.Diff(paths[i+1:min(i+3, len(paths))], got, cmpopts.EquateEmpty()); err != nil || total != len(paths) || diff != "" {
			t.Errorf("after %q: %d in all, %v; page (-want +got):\n%s", after, total, err, diff)
		}
	}
	open, _, err := s.Browse().NoteList(ctx, vault.NoteQuery{Scope: vault.ScopeOpen, State: vault.StatusIndexed, After: paths[0]})
	if err != nil || len(open) == 0 {
		t.Fatalf("open notes after %q: %d, %v; want some", paths[0], len(open), err)
	}
	for _, e := range open {
		if e.Sensitivity != vault.SensitivityOpen || e.Path <= paths[0] {
			t.Errorf("open notes after %q list %+v", paths[0], e)
		}
	}
}
