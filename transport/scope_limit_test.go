package transport

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/vaultask/vaultask/tstest/smallvault"
)

// limitDays is how many personal notes the vault holds before its open
// ones: more than any page of /status/notes the test reads.
const limitDays = 60

// /status/notes?allow_web=true, paged with fewer notes a page than there
// are personal notes before the open ones: every page is full of open
// notes, the pages together list every open note once, and the total
// counts them alone.
func TestStatusNotesPagesMorePersonalThanALimit(t *testing.T) {
	store, open := smallvault.WithDiary(t, limitDays)
	hs, _ := testServer(t, store, upstream(t), Options{})
	type list struct {
		Total int                                  `json:"total"`
		Notes []struct{ Path, Sensitivity string } `json:"notes"`
	}
	var all list
	decode(t, do(t, http.MethodGet, hs.URL+"/status/notes?limit=2&offset=2", nil), &all)
	if all.Total != len(open)+3+limitDays || len(all.Notes) != 2 || all.Notes[0].Sensitivity != "personal" || all.Notes[1].Sensitivity != "personal" {
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
