package transport

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// limitVault is testVault with more personal notes than any page these
// tests read (resources/list's resourcePage, a /status/notes limit), all
// listed before the open Recipes/ notes, and a topic note that collects
// twelve of them and one open note.
func limitVault(t *testing.T) (store *index.Store, open []string) {
	t.Helper()
	store = testVault(t)
	var notes []vault.NoteInput
	clippings := "# Journal\n\n<!-- begin:clippings -->\n[[Recipes/Starter]]\n"
	for i := range resourcePage + 10 {
		notes = append(notes, note(fmt.Sprintf("Diary/Day %03d.md", i), "# Day\n\nKnead "+personalMark+".\n"))
		if i < 12 {
			clippings += fmt.Sprintf("[[Diary/Day %03d]]\n", i)
		}
	}
	notes = append(notes, note("99 topics/Journal.md", clippings+"<!-- end:clippings -->\n"))
	if _, err := store.Apply(context.Background(), index.Batch{Upserts: notes}); err != nil {
		t.Fatal(err)
	}
	return store, []string{"99 topics/Baking.md", "99 topics/Journal.md", "Recipes/Bread.md", "Recipes/Sourdough bread.md", "Recipes/Starter.md"}
}

// /status/notes?allow_web=true, paged with fewer notes a page than there
// are personal notes before the open ones: every page is full of open
// notes, the pages together list every open note once, and the total
// counts them alone.
func TestStatusNotesPagesMorePersonalThanALimit(t *testing.T) {
	store, open := limitVault(t)
	hs, _ := testServer(t, store, upstream(t), Options{})
	type list struct {
		Total int                                  `json:"total"`
		Notes []struct{ Path, Sensitivity string } `json:"notes"`
	}
	var all list
	decode(t, do(t, http.MethodGet, hs.URL+"/status/notes?limit=2&offset=2", nil), &all)
	if all.Total != len(open)+3+resourcePage+10 || len(all.Notes) != 2 || all.Notes[0].Sensitivity != "personal" || all.Notes[1].Sensitivity != "personal" {
		t.Fatalf("the whole vault's second page: %+v, want personal notes (the premise)", all)
	}
	var got []string
	for offset := 0; offset < 2*len(open); offset += 2 {
		var page list
		resp := do(t, http.MethodGet, fmt.Sprintf("%s/status/notes?allow_web=true&limit=2&offset=%d", hs.URL, offset), nil)
		decode(t, resp, &page)
		if resp.StatusCode != http.StatusOK || page.Total != len(open) || len(page.Notes) != min(2, max(len(open)-offset, 0)) {
			t.Fatalf("allow_web=true, offset %d: %d, %d notes of %d; want a full page of the %d open notes", offset, resp.StatusCode, len(page.Notes), page.Total, len(open))
		}
		for _, n := range page.Notes {
			if n.Sensitivity != "open" {
				t.Errorf("allow_web=true lists %+v", n)
			}
			got = append(got, n.Path)
		}
	}
	if !slices.Equal(got, open) {
		t.Errorf("allow_web=true pages list %v, want %v", got, open)
	}
}

// resources/list on /mcp?allow_web=true with more personal notes than a
// page before the open ones lists every open note, in full pages, and no
// personal one.
func TestMCPResourcesListMorePersonalThanAPage(t *testing.T) {
	store, open := limitVault(t)
	hs, _ := testServer(t, store, upstream(t), Options{})
	list := func(endpoint string) (names []string, pages int) {
		t.Helper()
		session := initialize(t, hs.URL+endpoint).Header.Get("Mcp-Session-Id")
		cursor := ""
		for {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			var p struct {
				Resources  []struct{ Name string } `json:"resources"`
				NextCursor string                  `json:"nextCursor"`
			}
			rpcResult(t, hs.URL+endpoint, session, "resources/list", params, &p)
			pages++
			for _, r := range p.Resources {
				names = append(names, r.Name)
			}
			if cursor = p.NextCursor; cursor == "" || pages > 10 {
				return names, pages
			}
		}
	}
	if all, pages := list(""); pages < 2 || !slices.ContainsFunc(all[:resourcePage], func(n string) bool { return strings.HasPrefix(n, "Diary/") }) {
		t.Fatalf("the whole vault in %d pages, the first %v: want personal notes in the first page (the premise)", pages, all[:min(len(all), 5)])
	}
	got, pages := list("?allow_web=true")
	slices.Sort(got)
	if !slices.Equal(got, open) || pages != 1 {
		t.Errorf("allow_web=true lists %v in %d pages, want %v in one", got, pages, open)
	}
}

// vault_neighbors with allow_web=true lists a topic note's open members,
// and none of the twelve personal notes it also collects: not an empty
// answer, which shows no personal note either.
func TestMCPNeighborsMorePersonalThanOpen(t *testing.T) {
	store, _ := limitVault(t)
	hs, _ := testServer(t, store, upstream(t), Options{})
	session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
	neighbours := func(path string, allowWeb bool) []string {
		t.Helper()
		var res struct {
			StructuredContent struct {
				Neighbors []struct{ Path, Relation string } `json:"neighbors"`
			} `json:"structuredContent"`
			IsError bool `json:"isError"`
		}
		rpcResult(t, hs.URL, session, "tools/call", map[string]any{"name": "vault_neighbors",
			"arguments": map[string]any{"path": path, "allow_web": allowWeb}}, &res)
		if res.IsError {
			t.Fatalf("vault_neighbors %s: an error", path)
		}
		var out []string
		for _, n := range res.StructuredContent.Neighbors {
			out = append(out, n.Relation+" "+n.Path)
		}
		slices.Sort(out)
		return out
	}
	if all := neighbours("99 topics/Journal", false); len(all) != 13 {
		t.Fatalf("the whole vault: Journal's neighbours %v, want its 13 members (the premise)", all)
	}
	if got, want := neighbours("99 topics/Journal", true), []string{"member Recipes/Starter.md"}; !slices.Equal(got, want) {
		t.Errorf("allow_web=true: Journal's neighbours %v, want %v", got, want)
	}
	if got, want := neighbours("99 topics/Baking", true), []string{"member Recipes/Sourdough bread.md", "member Recipes/Starter.md"}; !slices.Equal(got, want) {
		t.Errorf("allow_web=true: Baking's neighbours %v, want %v", got, want)
	}
}
