package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vaultask/vaultask/tstest/fakellm"
)

// sseFrame is one event of an /events stream.
type sseFrame struct{ id, event, data string }

// followEvents streams url's events into a channel until the test ends.
func followEvents(t *testing.T, url string, header ...string) <-chan sseFrame {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan sseFrame, 256)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		var f sseFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && f.event != "":
				out <- f
				f = sseFrame{}
			case strings.HasPrefix(line, "id: "):
				f.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				f.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				f.data = line[6:]
			}
		}
	}()
	return out
}

// nextUntil reads frames until one satisfies stop, returning them all.
func nextUntil(t *testing.T, frames <-chan sseFrame, what string, stop func(sseFrame) bool) []sseFrame {
	t.Helper()
	var got []sseFrame
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatalf("/events ended before %s: %+v", what, got)
			}
			got = append(got, f)
			if stop(f) {
				return got
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("no %s on /events within 60s: %+v", what, got)
		}
	}
}

// A client of open notes only (allow_web=true) sees nothing move when a
// personal note is written through LiveSync: no event, no gap in its event
// ids, no embedding progress, no count on /status; a client of the whole
// vault sees the note, its embedding and the counts.
func TestServeOpenOnlyClientsSeeNoPersonalChange(t *testing.T) {
	srv, db, lp := serveVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	s := startServe(t, serveEnv(t, srv, db, up))
	waitEmbedded(t, s, "", 3)
	status := func(query string) map[string]any {
		t.Helper()
		var st map[string]any
		if code := getJSON(t, s.url+"/status"+query, &st); code != http.StatusOK {
			t.Fatalf("/status%s: %d %v", query, code, st)
		}
		return st
	}
	waitUntil(t, 30*time.Second, "the feed connected and caught up", func() bool {
		f := status("")["feed"].(map[string]any)
		return f["connected"] == true && f["caught_up"] == true
	})
	openBefore := status("?allow_web=true")
	openIndex := openBefore["index"].(map[string]any)
	if openIndex["notes"] != 2.0 || openIndex["personal_notes"] != 0.0 {
		t.Fatalf("/status?allow_web=true counts personal notes: %v", openIndex)
	}
	openChunks := int(openIndex["chunks"].(float64))

	// The open client resumes from the start: every event since serve began.
	open := followEvents(t, s.url+"/events?allow_web=true", "Last-Event-ID", "0")
	whole := followEvents(t, s.url+"/events")
	if err := lp.Put(context.Background(), "Journal/2026-12-01.md", "# Tuesday\n\nThe zebrafinch sang at dawn.\n", true); err != nil {
		t.Fatal(err)
	}
	nextUntil(t, whole, "the personal note's event", func(f sseFrame) bool { return strings.Contains(f.data, "Journal/2026-12-01.md") })
	nextUntil(t, whole, "its embedding", func(f sseFrame) bool { return f.event == "embedding.caught_up" })
	waitEmbedded(t, s, "", 4)
	if diff := cmp.Diff(openBefore, status("?allow_web=true")); diff != "" {
		t.Errorf("/status?allow_web=true moved with a personal note (-before +after):\n%s", diff)
	}
	if n := status("")["index"].(map[string]any)["notes"]; n != 4.0 {
		t.Errorf("/status counts %v notes after the personal note, want 4", n)
	}

	if err := lp.Put(context.Background(), "Recipes/Focaccia.md", "# Focaccia\n\nDimple the dough with oiled fingers.\n", true); err != nil {
		t.Fatal(err)
	}
	got := nextUntil(t, open, "the open note's event", func(f sseFrame) bool { return strings.Contains(f.data, "Recipes/Focaccia.md") })
	embedded := 0
	for i, f := range got {
		if f.id != strconv.Itoa(i+1) {
			t.Errorf("open-only event %d has id %s, want %d: ids leave gaps where personal events were", i+1, f.id, i+1)
		}
		if strings.Contains(f.data, "Journal") || strings.Contains(f.data, "seq") {
			t.Errorf("open-only event %s %s tells of personal notes", f.event, f.data)
		}
		if f.event == "embedding.caught_up" {
			var d struct{ Embedded int }
			if err := json.Unmarshal([]byte(f.data), &d); err != nil {
				t.Fatal(err)
			}
			embedded += d.Embedded
		}
	}
	if embedded != openChunks {
		t.Errorf("open-only embedding events count %d chunks embedded before the open note, want the %d open chunks", embedded, openChunks)
	}
}

// noteData is a note event's data as a client reads it, every key kept.
func noteData(t *testing.T, f sseFrame) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal([]byte(f.data), &d); err != nil {
		t.Fatalf("%s %s: %v", f.event, f.data, err)
	}
	return d
}

// An open note that its frontmatter makes personal is gone from the view
// of open notes only: a client of that view gets note.removed with its path
// alone (not its new title, nor why), and when it is open again,
// note.indexed, as a note new to it; a client of the whole vault gets
// note.reindexed both times.
func TestServeOpenOnlyClientsHearAScopeFlip(t *testing.T) {
	srv, db, lp := serveVault(t)
	up := fakellm.New()
	t.Cleanup(up.Close)
	s := startServe(t, append(couchEnv(t, srv, db), `VAULTASK_SENSITIVITY__PERSONAL_PATHS=["Journal/**"]`))
	waitUntil(t, 30*time.Second, "/readyz 200", func() bool { return getJSON(t, s.url+"/readyz", &map[string]any{}) == http.StatusOK })
	open := followEvents(t, s.url+"/events?allow_web=true")
	whole := followEvents(t, s.url+"/events")
	const path = "Recipes/Risotto.md"
	flip := func(text, wholeEvent, openEvent string) (wholeData, openData map[string]any) {
		t.Helper()
		if err := lp.Put(context.Background(), path, text, true); err != nil {
			t.Fatal(err)
		}
		onPath := func(f sseFrame) bool { return strings.Contains(f.data, path) }
		w := nextUntil(t, whole, wholeEvent, onPath)
		o := nextUntil(t, open, openEvent, onPath)
		if last := w[len(w)-1]; last.event != wholeEvent {
			t.Errorf("the whole vault's client got %s %s, want %s", last.event, last.data, wholeEvent)
		}
		if last := o[len(o)-1]; last.event != openEvent {
			t.Errorf("the open-only client got %s %s, want %s", last.event, last.data, openEvent)
		}
		return noteData(t, w[len(w)-1]), noteData(t, o[len(o)-1])
	}

	wholeData, openData := flip("---\nsensitivity: personal\ntitle: Risotto for the cardiologist\n---\n# Risotto\n\nLess salt in the stock.\n",
		"note.reindexed", "note.removed")
	if wholeData["title"] != "Risotto for the cardiologist" {
		t.Errorf("the whole vault's client got %v, want the new title", wholeData)
	}
	if len(openData) != 2 || openData["path"] != path || openData["at"] == nil {
		t.Errorf("the open-only client's removal says %v, want the path and the time alone", openData)
	}
	_, openData = flip("# Risotto\n\nStir the rice with warm stock, a ladle at a time.\n", "note.reindexed", "note.indexed")
	if openData["title"] != "Risotto" || openData["seq"] != nil {
		t.Errorf("the open-only client's note.indexed says %v, want the title without the feed's sequence", openData)
	}
}

// A note whose frontmatter Obsidian reads as text, written through
// LiveSync, is open; serve's log warns naming it and /status/notes says why.
func TestServeWarnsOfIgnoredFrontmatter(t *testing.T) {
	srv, db, lp := serveVault(t)
	s := startServe(t, couchEnv(t, srv, db))
	const path = "Recipes/Near miss.md"
	if err := lp.Put(context.Background(), path, "\n---\nsensitivity: personal\n---\n# Near miss\n\nA blank line before the block.\n", false); err != nil {
		t.Fatal(err)
	}
	var notes struct {
		Notes []struct{ Path, Sensitivity, Reason string }
	}
	waitUntil(t, 30*time.Second, "the note indexed", func() bool {
		getJSON(t, s.url+"/status/notes?path=near%20miss", &notes)
		return len(notes.Notes) == 1
	})
	if n := notes.Notes[0]; n.Sensitivity != "open" || !strings.Contains(n.Reason, "frontmatter starts after a blank line") {
		t.Errorf("/status/notes lists %+v, want it open with the reason", n)
	}
	waitUntil(t, 5*time.Second, "the warning", func() bool {
		for line := range strings.Lines(s.stderr.String()) {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, "path=\"Recipes/Near miss.md\"") && strings.Contains(line, "starts after a blank line") {
				return true
			}
		}
		return false
	})
}
