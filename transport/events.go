package transport

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/vaultask/vaultask/transport/allowweb"
)

// Event types /events sends.
const (
	EventNoteIndexed    = "note.indexed"   // a note new to the index
	EventNoteReindexed  = "note.reindexed" // a note whose text changed
	EventNoteRemoved    = "note.removed"   // a note gone from the vault
	EventEmbeddingDone  = "embedding.caught_up"
	EventFeedConnected  = "feed.connected"
	EventFeedFailing    = "feed.error"
	EventReconcileDone  = "reconcile.finished"
	EventResync         = "resync"   // the client fell behind: read /status again
	EventServerShutdown = "shutdown" // the server is stopping: the last event
)

// Event is one thing the index did, as /events sends it: an SSE event of
// Type whose data is Data as JSON.
type Event struct {
	Type string
	Data any
	// OpenData is what a client that asked for open notes only
	// (allow_web=true) gets in place of Data: nil for an event about a
	// personal note, Data for one about nothing personal, and for an event
	// that counts notes, the counts over open notes. Nil by default, so an
	// event nobody thought about is never sent to such a client.
	OpenData any
	// OpenType, when set, is the type such a client gets in place of Type:
	// a note that became personal is gone from its view (note.removed),
	// one that became open is new to it (note.indexed).
	OpenType string
	At       time.Time
}

// frame is an event as one scope's clients get it: its id in that scope's
// sequence, its type and its data.
type frame struct {
	id   uint64
	typ  string
	data any
}

// published is an event with its id in each scope's sequence: all for
// clients of the whole vault, open (0 when they do not get it) for clients
// of open notes only, so that the latter see no gap where a personal note's
// event went.
type published struct {
	Event
	all, open uint64
}

// frame is the event as a client of the scope gets it; ok is false when
// that client does not get it.
func (p published) frame(openOnly bool) (f frame, ok bool) {
	if !openOnly {
		return frame{p.all, p.Type, p.Data}, true
	}
	return frame{p.open, cmp.Or(p.OpenType, p.Type), p.OpenData}, p.OpenData != nil
}

// NoteEvent is the data of the note events.
type NoteEvent struct {
	Path  string `json:"path"`
	Title string `json:"title,omitempty"`
	Seq   string `json:"seq,omitempty"` // the feed's sequence that carried it
	At    string `json:"at"`
}

// Events is the broadcast behind /events: a bounded window of recent events
// for clients that resume with Last-Event-ID, and a bounded buffer per
// client. A client too slow to keep up is sent a resync event and dropped,
// so nothing grows without bound. The zero value is not usable: see
// NewEvents.
type Events struct {
	mu sync.Mutex
	// next and nextOpen are the next ids of the two sequences.
	next, nextOpen uint64
	recent         []published // the last window events, oldest first
	window         int
	buffer         int
	clients        map[*subscriber]bool
	closed         bool
}

type subscriber struct {
	c        chan frame
	openOnly bool
	dropped  bool
}

// NewEvents returns a broadcast that keeps window recent events for
// resumption and buffers up to buffer events per client.
func NewEvents(window, buffer int) *Events {
	return &Events{window: max(window, 1), buffer: max(buffer, 1), clients: map[*subscriber]bool{}, next: 1, nextOpen: 1}
}

// Publish sends an event to every client that may see it, stamping its ids
// and time.
func (e *Events) Publish(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	p := published{Event: ev, all: e.next}
	e.next++
	if ev.OpenData != nil {
		p.open = e.nextOpen
		e.nextOpen++
	}
	e.recent = append(e.recent, p)
	if len(e.recent) > e.window {
		e.recent = e.recent[len(e.recent)-e.window:]
	}
	for s := range e.clients {
		f, ok := p.frame(s.openOnly)
		if !ok {
			continue
		}
		select {
		case s.c <- f:
		default:
			// The client is too slow: drop it rather than buffer for it.
			s.dropped = true
			delete(e.clients, s)
			close(s.c)
		}
	}
}

// subscribe registers a client and returns the recent events after lastID,
// in the client's scope, to send it first; resync reports that some of
// them fell out of the window.
func (e *Events) subscribe(lastID uint64, resume, openOnly bool) (s *subscriber, backlog []frame, resync bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s = &subscriber{c: make(chan frame, e.buffer), openOnly: openOnly}
	if e.closed {
		close(s.c)
		return s, nil, false
	}
	e.clients[s] = true
	if !resume {
		return s, nil, false
	}
	next := e.next
	if openOnly {
		next = e.nextOpen
	}
	kept := false // whether the event right after lastID is still in the window
	for _, p := range e.recent {
		if f, ok := p.frame(openOnly); ok && f.id > lastID {
			kept = kept || f.id == lastID+1
			backlog = append(backlog, f)
		}
	}
	if lastID+1 < next && !kept {
		return s, nil, true
	}
	return s, backlog, false
}

func (e *Events) unsubscribe(s *subscriber) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.clients[s] {
		delete(e.clients, s)
		close(s.c)
	}
}

// Close ends every stream with a shutdown event; later Publish calls do
// nothing.
func (e *Events) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	reason := map[string]string{"reason": "the server is stopping"}
	bye := published{Event: Event{Type: EventServerShutdown, Data: reason, OpenData: reason}, all: e.next, open: e.nextOpen}
	for s := range e.clients {
		f, _ := bye.frame(s.openOnly)
		select {
		case s.c <- f:
		default:
		}
		delete(e.clients, s)
		close(s.c)
	}
}

// heartbeat is how often an idle /events stream gets a comment, so that
// proxies keep it open and clients see it alive.
const heartbeat = 15 * time.Second

// serveEvents streams events as Server-Sent Events: the recent ones after
// Last-Event-ID first, then live ones, a heartbeat comment when idle. With
// allow_web=true only what open notes alone could cause is sent, numbered
// in a sequence of its own: no event, id gap or count moves because a
// personal note changed.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	var lastID uint64
	resume := false
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: "last_event_id", Message: fmt.Sprintf("Last-Event-ID %q is not an event id", v)})
			return
		}
		lastID, resume = id, true
	}
	openOnly, err := allowweb.Param(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: "allow_web", Message: err.Error()})
		return
	}
	sub, backlog, resync := s.events.subscribe(lastID, resume, openOnly)
	defer s.events.unsubscribe(sub)
	sse := startSSE(w)
	if resync {
		sse.event(0, EventResync, map[string]string{"reason": "events after that id are no longer kept"})
	}
	for _, f := range backlog {
		sse.event(f.id, f.typ, f.data)
	}
	if err := sse.flush(); err != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			sse.comment("heartbeat")
		case f, ok := <-sub.c:
			if !ok {
				if sub.dropped {
					sse.event(0, EventResync, map[string]string{"reason": "the client fell behind; read /status"})
				}
				_ = sse.flush()
				return
			}
			sse.event(f.id, f.typ, f.data)
		}
		if err := sse.flush(); err != nil {
			return
		}
	}
}

// sseWriter writes Server-Sent Events frames. Its methods buffer; flush
// sends them and reports a client that is gone.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	err error
}

// startSSE sends the headers of an event stream and clears the write
// deadline, so a long stream is never cut by the server's timeouts.
func startSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	return &sseWriter{w: w, rc: rc}
}

func (s *sseWriter) write(text string) {
	if s.err == nil {
		_, s.err = fmt.Fprint(s.w, text)
	}
}

// event writes a named event (id 0: without an id).
func (s *sseWriter) event(id uint64, typ string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": "unencodable event"})
	}
	if id > 0 {
		s.write("id: " + strconv.FormatUint(id, 10) + "\n")
	}
	s.write("event: " + typ + "\ndata: " + string(b) + "\n\n")
}

// data writes an unnamed event holding text, as OpenAI's stream does.
func (s *sseWriter) data(text string) { s.write("data: " + text + "\n\n") }

// comment writes an SSE comment, which clients ignore: a keepalive.
func (s *sseWriter) comment(text string) { s.write(": " + text + "\n\n") }

func (s *sseWriter) flush() error {
	if s.err == nil {
		s.err = s.rc.Flush()
	}
	return s.err
}
