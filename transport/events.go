package transport

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
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
	ID   uint64
	Type string
	Data any
	// Personal marks an event about a personal note: a client that asked
	// for open notes only (allow_web=true) does not get it.
	Personal bool
	At       time.Time
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
	mu      sync.Mutex
	next    uint64
	recent  []Event // the last window events, oldest first
	window  int
	buffer  int
	clients map[*subscriber]bool
	closed  bool
}

type subscriber struct {
	c        chan Event
	openOnly bool
	dropped  bool
}

// NewEvents returns a broadcast that keeps window recent events for
// resumption and buffers up to buffer events per client.
func NewEvents(window, buffer int) *Events {
	return &Events{window: max(window, 1), buffer: max(buffer, 1), clients: map[*subscriber]bool{}, next: 1}
}

// Publish sends an event to every client, stamping its id and time.
func (e *Events) Publish(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	ev.ID = e.next
	e.next++
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	e.recent = append(e.recent, ev)
	if len(e.recent) > e.window {
		e.recent = e.recent[len(e.recent)-e.window:]
	}
	for s := range e.clients {
		if ev.Personal && s.openOnly {
			continue
		}
		select {
		case s.c <- ev:
		default:
			// The client is too slow: drop it rather than buffer for it.
			s.dropped = true
			delete(e.clients, s)
			close(s.c)
		}
	}
}

// subscribe registers a client and returns the recent events after lastID
// to send it first; resync reports that lastID fell out of the window.
func (e *Events) subscribe(lastID uint64, resume, openOnly bool) (s *subscriber, backlog []Event, resync bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s = &subscriber{c: make(chan Event, e.buffer), openOnly: openOnly}
	if e.closed {
		close(s.c)
		return s, nil, false
	}
	e.clients[s] = true
	if !resume {
		return s, nil, false
	}
	if len(e.recent) == 0 || lastID+1 < e.recent[0].ID {
		return s, nil, lastID+1 < e.next
	}
	for _, ev := range e.recent {
		if ev.ID > lastID && !(ev.Personal && openOnly) {
			backlog = append(backlog, ev)
		}
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
	bye := Event{ID: e.next, Type: EventServerShutdown, Data: map[string]string{"reason": "the server is stopping"}, At: time.Now()}
	for s := range e.clients {
		select {
		case s.c <- bye:
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
// allow_web=true only events about open notes are sent.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	var lastID uint64
	resume := false
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "last_event_id", "", fmt.Sprintf("Last-Event-ID %q is not an event id", v))
			return
		}
		lastID, resume = id, true
	}
	openOnly, err := allowWebParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "allow_web", "", err.Error())
		return
	}
	sub, backlog, resync := s.events.subscribe(lastID, resume, openOnly)
	defer s.events.unsubscribe(sub)
	sse := startSSE(w)
	if resync {
		sse.event(0, EventResync, map[string]string{"reason": "events after that id are no longer kept"})
	}
	for _, ev := range backlog {
		sse.event(ev.ID, ev.Type, ev.Data)
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
		case ev, ok := <-sub.c:
			if !ok {
				if sub.dropped {
					sse.event(0, EventResync, map[string]string{"reason": "the client fell behind; read /status"})
				}
				_ = sse.flush()
				return
			}
			sse.event(ev.ID, ev.Type, ev.Data)
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
