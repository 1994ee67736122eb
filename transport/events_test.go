package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/tstest/smallvault"
)

// eventsStream opens /events with header pairs, returning the response.
func eventsStream(t *testing.T, ctx context.Context, url string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("/events: %d %v", resp.StatusCode, resp.Header)
	}
	return resp
}

// waitSubscribers waits until the broadcast has n clients.
func waitSubscribers(t *testing.T, ev *Events, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ev.mu.Lock()
		got := len(ev.clients)
		ev.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d clients subscribed, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func noteEvent(path string, personal bool) Event {
	ev := Event{Type: EventNoteIndexed, Data: NoteEvent{Path: path, At: "now"}}
	if !personal {
		ev.OpenData = ev.Data
	}
	return ev
}

func TestEventsLiveAndResumed(t *testing.T) {
	ev := NewEvents(3, 16)
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{Events: ev})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := eventsStream(t, ctx, hs.URL+"/events")
	waitSubscribers(t, ev, 1)
	ev.Publish(noteEvent("A.md", false))
	ev.Publish(noteEvent("Diary/B.md", true))
	got := readSSE(t, resp.Body, func(e sseEvent) bool { return strings.Contains(e.data, "Diary/B.md") })
	if len(got) != 2 || got[0].id != "1" || got[0].event != EventNoteIndexed || got[1].id != "2" {
		t.Fatalf("live events = %+v", got)
	}
	var data NoteEvent
	if err := json.Unmarshal([]byte(got[0].data), &data); err != nil || data.Path != "A.md" {
		t.Fatalf("event data %q: %v", got[0].data, err)
	}

	// A client that saw event 2 resumes with the ones after it, within the
	// window. With allow_web=true the ids are of open events alone, so the
	// personal note's event leaves no gap: A, C and D are 1, 2 and 3.
	for _, e := range []Event{noteEvent("C.md", false), noteEvent("D.md", false)} {
		ev.Publish(e)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	resumed := eventsStream(t, ctx2, hs.URL+"/events", "Last-Event-ID", "2")
	var ids []string
	for _, e := range readSSE(t, resumed.Body, func(e sseEvent) bool { return e.id == "4" }) {
		ids = append(ids, e.id)
	}
	cancel2()
	if diff := cmp.Diff([]string{"3", "4"}, ids); diff != "" {
		t.Errorf("resumed after 2 (-want +got):\n%s", diff)
	}
	ctx3, cancel3 := context.WithCancel(context.Background())
	open := eventsStream(t, ctx3, hs.URL+"/events?allow_web=true", "Last-Event-ID", "1")
	var paths []string
	for _, e := range readSSE(t, open.Body, func(e sseEvent) bool { return strings.Contains(e.data, "D.md") }) {
		paths = append(paths, e.id+" "+e.data[strings.Index(e.data, `"path":"`)+8:strings.Index(e.data, `","at"`)])
	}
	cancel3()
	if diff := cmp.Diff([]string{"2 C.md", "3 D.md"}, paths); diff != "" {
		t.Errorf("open notes only, resumed after 1 (-want +got):\n%s", diff)
	}
	// Live, with allow_web=true, a personal note's event is never sent: the
	// open one published after it is the first thing the client reads.
	ctx5, cancel5 := context.WithCancel(context.Background())
	live := eventsStream(t, ctx5, hs.URL+"/events?allow_web=true")
	waitSubscribers(t, ev, 2) // the first stream is still open
	ev.Publish(noteEvent("Diary/E.md", true))
	ev.Publish(noteEvent("F.md", false))
	liveGot := readSSE(t, live.Body, func(e sseEvent) bool { return strings.Contains(e.data, "F.md") })
	cancel5()
	if len(liveGot) != 1 || strings.Contains(liveGot[0].data, "Diary/E.md") || liveGot[0].id != "4" {
		t.Errorf("live open-only events = %+v, want only F.md's, as open event 4", liveGot)
	}
	// An id that fell out of the three-event window asks for a resync.
	ctx4, cancel4 := context.WithCancel(context.Background())
	old := eventsStream(t, ctx4, hs.URL+"/events", "Last-Event-ID", "0")
	first := readSSE(t, old.Body, func(sseEvent) bool { return true })
	cancel4()
	if len(first) != 1 || first[0].event != EventResync {
		t.Errorf("resume from before the window: %+v, want a resync event", first)
	}
	if resp := do(t, http.MethodGet, hs.URL+"/events", nil, "Last-Event-ID", "x"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a malformed Last-Event-ID: %d", resp.StatusCode)
	}
}

// A client that does not read is dropped, told to resync, rather than
// buffered for without bound; the others go on.
func TestEventsDropSlowClient(t *testing.T) {
	ev := NewEvents(100, 2)
	slow, _, _ := ev.subscribe(0, false, false)
	fast, _, _ := ev.subscribe(0, false, false)
	for i := range 5 {
		ev.Publish(noteEvent("N.md", false))
		select {
		case <-fast.c:
		case <-time.After(time.Second):
			t.Fatalf("the fast client missed event %d", i+1)
		}
	}
	n := 0
	for range slow.c {
		n++
	}
	if !slow.dropped || n != 2 {
		t.Fatalf("the slow client: dropped %v after %d buffered events, want dropped after 2", slow.dropped, n)
	}
	ev.mu.Lock()
	clients := len(ev.clients)
	ev.mu.Unlock()
	if clients != 1 {
		t.Fatalf("%d clients left, want the fast one", clients)
	}
}

// An event that says nothing of what open-only clients get (no OpenData)
// is not sent to them: the default fails closed.
func TestEventsWithoutOpenDataStayWithTheWholeVault(t *testing.T) {
	ev := NewEvents(10, 4)
	openSub, _, _ := ev.subscribe(0, false, true)
	wholeSub, _, _ := ev.subscribe(0, false, false)
	ev.Publish(Event{Type: EventEmbeddingDone, Data: map[string]int{"embedded": 1}})
	ev.Publish(noteEvent("Open.md", false))
	if f := <-openSub.c; f.typ != EventNoteIndexed || f.id != 1 {
		t.Errorf("the open-only client's first event: %+v, want Open.md's as 1", f)
	}
	if f := <-wholeSub.c; f.typ != EventEmbeddingDone || f.id != 1 {
		t.Errorf("the whole vault's first event: %+v, want the embedding's as 1", f)
	}
	_, backlog, resync := ev.subscribe(0, true, true)
	if resync || len(backlog) != 1 || backlog[0].id != 1 {
		t.Errorf("an open-only client resuming from 0: %+v (resync %v), want Open.md's alone", backlog, resync)
	}
}

// An event with an OpenType reaches open-only clients as that type, live
// and resumed, and the whole vault's clients as its Type.
func TestEventsOpenType(t *testing.T) {
	ev := NewEvents(10, 4)
	openSub, _, _ := ev.subscribe(0, false, true)
	wholeSub, _, _ := ev.subscribe(0, false, false)
	gone := NoteEvent{Path: "Recipes/Risotto.md", At: "now"}
	ev.Publish(Event{Type: EventNoteReindexed, Data: NoteEvent{Path: gone.Path, Title: "New title", At: "now"}, OpenType: EventNoteRemoved, OpenData: gone})
	if f := <-openSub.c; f.typ != EventNoteRemoved || f.data != gone {
		t.Errorf("the open-only client got %+v, want note.removed with the path alone", f)
	}
	if f := <-wholeSub.c; f.typ != EventNoteReindexed {
		t.Errorf("the whole vault's client got %+v, want note.reindexed", f)
	}
	if _, backlog, _ := ev.subscribe(0, true, true); len(backlog) != 1 || backlog[0].typ != EventNoteRemoved {
		t.Errorf("an open-only client resuming got %+v, want the note.removed", backlog)
	}
}

// Closing the broadcast ends every stream with a shutdown event.
func TestEventsShutdown(t *testing.T) {
	ev := NewEvents(10, 4)
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{Events: ev})
	resp := eventsStream(t, context.Background(), hs.URL+"/events")
	waitSubscribers(t, ev, 1)
	ev.Close()
	got := readSSE(t, resp.Body, nil)
	if len(got) != 1 || got[0].event != EventServerShutdown {
		t.Fatalf("after Close: %+v, want one shutdown event and the end of the stream", got)
	}
	ev.Publish(noteEvent("Late.md", false))
}
