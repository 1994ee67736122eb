package vault

import (
	"errors"
	"time"
)

// NoteInput is one note as a source delivers it: its real vault path and
// full markdown text. The source decides what a revision is (CouchDB's _rev,
// or a file's modification time for a folder).
type NoteInput struct {
	Path     string // vault path with its real case, e.g. "Notes/Shopping List.md"
	SourceID string // the source's id for the note (CouchDB _id), if any
	Rev      string
	Text     string
	MTime    time.Time
}

// ErrNoNote means no note the scope may see answers to a reference: a note
// that does not exist and a personal one under ScopeOpen look the same.
var ErrNoNote = errors.New("no such note")

// NoteText is a note's text, whole or a page of it.
type NoteText struct {
	Doc
	Text string
	// Length is the whole text's length in bytes; Offset is where Text
	// starts in it.
	Length, Offset int
}

// States of a note: indexed, or one of the states of a note a source could
// not index or chose not to.
const (
	// StatusIndexed: the note is in the index.
	StatusIndexed = "indexed"
	// StatusPending: the note is parked, waiting for chunks (or for a
	// revision whose size matches its text) that may still arrive.
	StatusPending = "pending"
	// StatusIncomplete: the note has been parked longer than the source's
	// bound; it stays unindexed (an older revision, if any, stays indexed)
	// until what it lacks arrives.
	StatusIncomplete = "incomplete"
	// StatusSkipped: the source does not index the document, for the
	// reason given (a binary attachment, outside the corpus, an unclean
	// path, unreadable); it is not retried until it changes.
	StatusSkipped = "skipped"
)

// NoteQuery selects notes for a status listing.
type NoteQuery struct {
	// State is StatusIndexed, or a note_status state (StatusPending,
	// StatusIncomplete, StatusSkipped); "" lists them all.
	State string
	// Path keeps the notes whose path holds it, in any case.
	Path string
	// Scope ScopeOpen (the zero value) lists only indexed open notes: the
	// path of a note that is not indexed says nothing of whether it is
	// personal.
	Scope Scope
	// After keeps the notes whose path sorts after it, byte by byte: the
	// next page of a listing by path (no two indexed notes share a path),
	// which notes written, added or removed meanwhile do not shift as they
	// shift an offset.
	After         string
	Offset, Limit int
}

// NoteEntry is one note of a status listing: an indexed note with what it
// holds, or one the source could not index or skipped, with why.
type NoteEntry struct {
	Path        string `json:"path"`
	Title       string `json:"title,omitempty"`
	State       string `json:"state"`
	Sensitivity string `json:"sensitivity,omitempty"`
	Rev         string `json:"rev"`
	// Reason says why a note is not indexed, or for an indexed one what
	// is off: read as plain text, made personal by a malformed frontmatter
	// override, or an override ignored because Obsidian reads its
	// frontmatter as text.
	Reason    string    `json:"reason,omitempty"`
	IndexedAt time.Time `json:"indexed_at,omitzero"`
	Since     time.Time `json:"since,omitzero"`
	Chunks    int       `json:"chunks"`
	Vectors   int       `json:"vectors"`
}
