package transport

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

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
	// CaughtUp is set once everything the source held at the start is
	// indexed; until then the index answers with what it has so far.
	CaughtUp bool `json:"caught_up"`
	// LastSeq is the last sequence applied, UpdateSeq the database's as
	// last read, and Lag the number of changes between them when both are
	// numbers (-1 when unknown).
	LastSeq      string    `json:"last_seq,omitempty"`
	UpdateSeq    string    `json:"update_seq,omitempty"`
	Lag          int64     `json:"lag"`
	LastChangeAt time.Time `json:"last_change_at,omitzero"`
	// Scanning is set during a full scan, ScanDone of ScanTotal notes
	// written (0 of 0 while the source is listed).
	Scanning    bool      `json:"scanning"`
	ScanDone    int       `json:"scan_done"`
	ScanTotal   int       `json:"scan_total"`
	Failing     bool      `json:"failing"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	Stopped     string    `json:"stopped,omitempty"` // why the feed stopped for good, if it did
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
	PendingNotes     int    `json:"pending_notes"`
	IncompleteNotes  int    `json:"incomplete_notes"`
	SkippedNotes     int    `json:"skipped_notes"`
	FileBytes        int64  `json:"file_bytes"`
	EmbeddingModel   string `json:"embedding_model"`
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

// healthz says the process is up; it checks nothing else.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is 200 once the index is open and the feed has caught up at least
// once; until then 503 with what is missing. Either way the API answers
// from what is indexed so far, and the body says what that is.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	st := s.opts.Status(r.Context())
	var missing []string
	switch {
	case st.IndexError != "":
		missing = append(missing, "index: "+st.IndexError)
	case st.Feed.Stopped != "":
		missing = append(missing, "feed stopped: "+st.Feed.Stopped)
	case !st.Feed.CaughtUp:
		switch {
		case st.Feed.Scanning && st.Feed.ScanTotal > 0:
			missing = append(missing, fmt.Sprintf("feed catching up: first full scan, %d of %d notes written", st.Feed.ScanDone, st.Feed.ScanTotal))
		case st.Feed.Scanning:
			missing = append(missing, "feed catching up: listing the vault")
		case st.Feed.Failing:
			missing = append(missing, "feed connecting: "+st.Feed.LastError)
		default:
			missing = append(missing, "feed connecting")
		}
	}
	body := map[string]any{
		"ready":             len(missing) == 0,
		"notes":             st.Index.Notes,
		"embedding_backlog": st.Index.EmbeddingBacklog,
	}
	code := http.StatusOK
	if len(missing) > 0 {
		code = http.StatusServiceUnavailable
		body["missing"] = missing
		body["serving"] = fmt.Sprintf("answers come from the %d notes indexed so far", st.Index.Notes)
	}
	writeJSON(w, code, body)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.opts.Status(r.Context()))
}

// statusNotes lists notes by state, for "why is this note not found?":
// each indexed note with when and what it holds, each one not indexed with
// why. allow_web=true lists indexed open notes only.
func (s *Server) statusNotes(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	allowWeb, err := allowWebParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "allow_web", "", err.Error())
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
				writeError(w, http.StatusBadRequest, "invalid_request_error", p.name, "", fmt.Sprintf("%s=%q: want an integer from %d to %d", p.name, v, p.min, p.max))
				return
			}
			*p.dst = n
		}
	}
	switch nq.State {
	case "", vault.StatusIndexed, vault.StatusPending, vault.StatusIncomplete, vault.StatusSkipped:
	default:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "state", "", fmt.Sprintf("state=%q: want indexed, pending, incomplete or skipped", nq.State))
		return
	}
	notes, total, err := s.opts.Vault.NoteList(r.Context(), nq)
	if err != nil {
		s.log.Error("note list", "err", err)
		writeError(w, http.StatusInternalServerError, "server_error", "", "", "internal error")
		return
	}
	if notes == nil {
		notes = []vault.NoteEntry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": total, "offset": nq.Offset, "limit": nq.Limit, "notes": notes})
}
