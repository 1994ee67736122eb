package transport

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/vaultask/vaultask/transport/allowweb"
	"github.com/vaultask/vaultask/vault"
)

// Status is what /status reports, as stable keys scripts read (feed.last_seq,
// index.notes, …), and what /readyz decides readiness from.
type Status struct {
	Version    string          `json:"version"`
	StartedAt  time.Time       `json:"started_at"`
	Feed       FeedStatus      `json:"feed"`
	Index      IndexStatus     `json:"index"`
	Embedder   EmbedderStatus  `json:"embedder"`
	Reconcile  ReconcileStatus `json:"reconcile"`
	IndexError string          `json:"index_error,omitempty"`
}

// FeedStatus is the vault's source: a LiveSync CouchDB database, or a folder.
type FeedStatus struct {
	Source    string `json:"source"` // "couchdb" or "folder"
	Database  string `json:"database,omitempty"`
	Connected bool   `json:"connected"`
	// State is Phase(): what the feed is doing now.
	State string `json:"state"`
	// CaughtUp is set once everything the source held at the start is
	// indexed; until then the index answers with what it has so far.
	CaughtUp bool `json:"caught_up"`
	// Resumed is set when the index had caught up before this process
	// started (it has the feed's checkpoint): it is whole as of then, and
	// ready while the feed connects and catches up.
	Resumed bool `json:"resumed"`
	// LastSeq is the last sequence applied, UpdateSeq the database's as
	// last read, and Lag the number of changes between them when both are
	// numbers (-1 when unknown).
	LastSeq      string    `json:"last_seq,omitempty"`
	UpdateSeq    string    `json:"update_seq,omitempty"`
	Lag          int64     `json:"lag"`
	LastChangeAt time.Time `json:"last_change_at,omitzero"`
	// Scanning is set during a full scan: ScanListed of ScanDocuments
	// documents listed, then ScanDone of ScanTotal notes written.
	Scanning      bool `json:"scanning"`
	ScanListed    int  `json:"scan_listed"`
	ScanDocuments int  `json:"scan_documents"`
	ScanDone      int  `json:"scan_done"`
	ScanTotal     int  `json:"scan_total"`
	// Failing is set, and LastError says why, from a failure until the
	// feed recovers; LastErrorAt is when the last failure happened.
	Failing     bool      `json:"failing"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// ErrorKind is the failure's kind ("unreachable", "unauthorized", "no
	// database", …), which names no server, database or user: what /readyz
	// says without the API key.
	ErrorKind string `json:"error_kind,omitempty"`
	Stopped   string `json:"stopped,omitempty"` // why the feed stopped for good, if it did
}

// States of the feed, as Phase names them.
const (
	FeedStopped      = "stopped"      // for good: the server's log says why
	FeedScanning     = "scanning"     // a full scan (the first, or a reconcile)
	FeedReconnecting = "reconnecting" // failing, and retrying with backoff
	FeedFollowing    = "following"    // connected, applying changes as they come
	FeedConnecting   = "connecting"   // between connections, or waiting for the first answer
)

// Phase is what the feed is doing now: one of the Feed… states.
func (f FeedStatus) Phase() string {
	switch {
	case f.Stopped != "":
		return FeedStopped
	case f.Scanning:
		return FeedScanning
	case f.Failing:
		return FeedReconnecting
	case f.Connected:
		return FeedFollowing
	}
	return FeedConnecting
}

// IndexStatus counts what the index holds.
type IndexStatus struct {
	Path             string `json:"path"`
	Notes            int    `json:"notes"`
	OpenNotes        int    `json:"open_notes"`
	PersonalNotes    int    `json:"personal_notes"`
	Chunks           int    `json:"chunks"`
	Vectors          int    `json:"vectors"`
	EmbeddingBacklog int    `json:"embedding_backlog"`
	// The counts over open chunks, which a caller that sees open notes
	// only gets as its chunks, vectors and embedding backlog.
	OpenChunks           int    `json:"open_chunks"`
	OpenVectors          int    `json:"open_vectors"`
	OpenEmbeddingBacklog int    `json:"open_embedding_backlog"`
	PendingNotes         int    `json:"pending_notes"`
	IncompleteNotes      int    `json:"incomplete_notes"`
	SkippedNotes         int    `json:"skipped_notes"`
	FileBytes            int64  `json:"file_bytes"`
	EmbeddingModel       string `json:"embedding_model"`
	// Reembedding is set while the index re-embeds with the configured
	// model: searches use the vectors of EmbeddingModel until it is done.
	Reembedding *Reembedding `json:"reembedding,omitempty"`
}

// Reembedding is how far the index is into the configured model's
// embedding space: Embedded of Total chunks have their vector there.
type Reembedding struct {
	Model    string `json:"model"`
	Embedded int    `json:"embedded"`
	Total    int    `json:"total"`
	// OpenEmbedded and OpenTotal count open chunks only: what a caller
	// that sees open notes only is shown as Embedded and Total.
	OpenEmbedded int `json:"open_embedded"`
	OpenTotal    int `json:"open_total"`
	// VectorSearch is set while the model of the space searched until the
	// switch is at hand (a built-in one): it embeds the questions, and the
	// notes written meanwhile get their vector in that space too. Unset,
	// both are searched by full text until the switch.
	VectorSearch bool `json:"vector_search"`
}

// EmbedderStatus is the background embedder's health.
type EmbedderStatus struct {
	Model     string    `json:"model"`
	Available bool      `json:"available"`
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since,omitzero"`
}

// ReconcileStatus is the periodic full reconcile.
type ReconcileStatus struct {
	LastRun     time.Time `json:"last_run,omitzero"`
	NextRun     time.Time `json:"next_run,omitzero"`
	TookSeconds float64   `json:"took_seconds"`
	Notes       int       `json:"notes"`
	Added       int       `json:"added"`
	Changed     int       `json:"changed"`
	Removed     int       `json:"removed"`
	Incomplete  int       `json:"incomplete"`
	Skipped     int       `json:"skipped"`
}

// openOnly is the status as a caller that sees open notes only gets it:
// the index counted over open notes, and every figure that a personal
// note's change moves (the feed's sequences, lag, last change and scan
// progress, the reconcile's counts, the notes not indexed, whose
// sensitivity is unknown, the file's size, how long the reconcile took)
// left out, and errors given by their kind only.
func (st Status) openOnly() Status {
	ix := st.Index
	st.Index = IndexStatus{Path: ix.Path, Notes: ix.OpenNotes, OpenNotes: ix.OpenNotes, Chunks: ix.OpenChunks, Vectors: ix.OpenVectors,
		EmbeddingBacklog: ix.OpenEmbeddingBacklog, OpenChunks: ix.OpenChunks, OpenVectors: ix.OpenVectors,
		OpenEmbeddingBacklog: ix.OpenEmbeddingBacklog, EmbeddingModel: ix.EmbeddingModel}
	if r := ix.Reembedding; r != nil {
		st.Index.Reembedding = &Reembedding{Model: r.Model, Embedded: r.OpenEmbedded, Total: r.OpenTotal, OpenEmbedded: r.OpenEmbedded, OpenTotal: r.OpenTotal,
			VectorSearch: r.VectorSearch}
	}
	f := &st.Feed
	f.LastSeq, f.UpdateSeq, f.Lag, f.LastChangeAt, f.ScanDone, f.ScanTotal = "", "", -1, time.Time{}, 0, 0
	f.ScanListed, f.ScanDocuments = 0, 0
	// An error's text may name a note (a file the folder scan could not
	// read, a document id): its kind only.
	if f.LastError != "" {
		f.LastError = f.errorKind()
	}
	st.Embedder.LastError = ""
	st.Reconcile = ReconcileStatus{LastRun: st.Reconcile.LastRun, NextRun: st.Reconcile.NextRun}
	return st
}

// errorKind is the kind of the feed's failure, for callers who may not see
// its description: "failing" when the source gives no kind (a folder).
func (f FeedStatus) errorKind() string {
	if f.ErrorKind == "" {
		return "failing"
	}
	return f.ErrorKind + " (see /status)"
}

// healthz says the process is up; it checks nothing else.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is 200 once the index answers: it is open and the feed has caught
// up once (its first scan is written), in this process or before it
// (Resumed: from the first second, whether or not CouchDB is there). It
// stays 200 while the feed fails, since the index still answers from what
// it holds (a NAS's CouchDB restarting, or starting after vaultask, must
// not make a container unhealthy); the body says the feed's state, and the
// kind of its error while it fails. Until then 503 with what is missing
// and why; the API answers from what is indexed so far meanwhile. It
// answers without the API key, so what it counts is counted over open notes
// and the feed's error is only its kind (feedErrorKind): the follower's own
// description names the server, the database and the user.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	st := s.opts.Status(r.Context()).openOnly()
	var missing []string
	switch {
	case st.IndexError != "":
		missing = append(missing, "index: "+st.IndexError)
	case st.Feed.Stopped != "":
		missing = append(missing, "feed stopped: "+st.Feed.Stopped)
	case !st.Feed.CaughtUp && !st.Feed.Resumed:
		switch {
		case st.Feed.Scanning: // its progress counts personal notes: /status has it
			missing = append(missing, "feed catching up: first full scan")
		case st.Feed.Failing:
			missing = append(missing, "feed connecting: "+st.Feed.errorKind())
		default:
			missing = append(missing, "feed connecting")
		}
	}
	body := map[string]any{
		"ready":             len(missing) == 0,
		"feed":              st.Feed.Phase(),
		"notes":             st.Index.Notes,
		"embedding_backlog": st.Index.EmbeddingBacklog,
	}
	if st.Feed.Failing {
		body["feed_error"] = st.Feed.errorKind()
	}
	if r := st.Index.Reembedding; r != nil {
		// Ready all the same: the old vectors answer until the new ones
		// are all there.
		body["reembedding"] = map[string]any{"model": r.Model, "embedded": r.Embedded, "total": r.Total}
	}
	code := http.StatusOK
	if len(missing) > 0 {
		code = http.StatusServiceUnavailable
		body["missing"] = missing
		notes := fmt.Sprintf("%d notes", st.Index.Notes)
		if st.Index.Notes == 1 {
			notes = "1 note"
		}
		body["serving"] = "answers come from the " + notes + " indexed so far"
	}
	writeJSON(w, code, body)
}

// status reports the feed, the index, the embedder and the reconcile;
// allow_web=true reports them as seen by a caller of open notes only.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	openOnly, err := allowweb.Param(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: "allow_web", Message: err.Error()})
		return
	}
	st := s.opts.Status(r.Context())
	if openOnly {
		st = st.openOnly()
	}
	writeJSON(w, http.StatusOK, st)
}

// statusNotes lists notes by state, for "why is this note not found?":
// each indexed note with when and what it holds, each one not indexed with
// why. allow_web=true lists indexed open notes only.
func (s *Server) statusNotes(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	allowWeb, err := allowweb.Param(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: "allow_web", Message: err.Error()})
		return
	}
	nq := vault.NoteQuery{State: q.Get("state"), Path: q.Get("path"), Scope: vault.ScopeFor(allowWeb), Limit: 100}
	for _, p := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"offset", &nq.Offset, 0, 1 << 30}, {"limit", &nq.Limit, 1, 1000}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < p.min || n > p.max {
				writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: p.name, Message: fmt.Sprintf("%s=%q: want an integer from %d to %d", p.name, v, p.min, p.max)})
				return
			}
			*p.dst = n
		}
	}
	switch nq.State {
	case "", vault.StatusIndexed, vault.StatusPending, vault.StatusIncomplete, vault.StatusSkipped:
	default:
		writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: "state", Message: fmt.Sprintf("state=%q: want indexed, pending, incomplete or skipped", nq.State)})
		return
	}
	notes, total, err := s.opts.Notes.NoteList(r.Context(), nq)
	if err != nil {
		s.log.Error("note list", keyErr, err)
		writeError(w, http.StatusInternalServerError, apiError{Type: serverFault, Message: "internal error"})
		return
	}
	if notes == nil {
		notes = []vault.NoteEntry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": total, "offset": nq.Offset, "limit": nq.Limit, "notes": notes})
}
