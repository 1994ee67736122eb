package livesync

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// FormatVersion is the newest database format version (the "version" of the
// obsydian_livesync_version document) this package knows. A follower should
// warn when Doc.Version is greater.
const FormatVersion = 12

// Kind says what a document is to an indexer.
type Kind int

const (
	// KindSkip is anything not indexed: design, version and sync-info
	// documents, hidden-file and customisation-sync documents, chunk packs,
	// flag files, paths with ':', unknown types. Doc.Reason says which.
	KindSkip Kind = iota
	// KindNote is a file's metadata document, live or soft-deleted
	// (Note.Deleted). Doc.Note is set.
	KindNote
	// KindChunk is a "leaf": Doc.Data holds its decoded data for the chunk
	// cache.
	KindChunk
	// KindTombstone is a _deleted note document: remove whatever path the
	// caller's _id → path map holds for Doc.ID.
	KindTombstone
	// KindChunkTombstone is a _deleted chunk: evict Doc.ID from the chunk
	// cache.
	KindChunkTombstone
)

var kindNames = [...]string{"skip", "note", "chunk", "tombstone", "chunk tombstone"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Doc is one classified document.
type Doc struct {
	Kind Kind
	ID   string
	Rev  string
	// Reason says why a KindSkip document is skipped.
	Reason string
	// Version is the format version carried by obsydian_livesync_version
	// (a KindSkip document), zero otherwise.
	Version int
	// E2EE reports an end-to-end encryption marker (FORMAT.md §5): an h:+ id
	// or child, e_, an encrypted eden, or an encrypted path.
	E2EE bool
	// Note is set for KindNote.
	Note *Note
	// Data is a KindChunk's data, decrypted and inflated: a piece of text for
	// text files, standard base64 for binary ones.
	Data string
}

// Note is a file's metadata, with encrypted fields already decrypted.
type Note struct {
	// Path is vault-relative, case preserved and never normalised. Key the
	// index by it; the document id is only a key for tombstones.
	Path string
	// Type is "plain", "newnote", "notes" or "" (legacy).
	Type string
	// Children are the chunk ids whose data, in this order and with
	// repetitions, make the file. Empty for an empty file.
	Children []string
	// Eden holds chunks stored inside the note (plugin 0.23.4–0.25.4); they
	// take precedence over leaf documents.
	Eden map[string]string
	// Legacy is set for notes written before chunking: Inline is then the
	// whole content and Children is unused.
	Legacy bool
	Inline []string
	Ctime  time.Time
	Mtime  time.Time
	// Size is the file size in bytes; zero means unknown.
	Size int64
	// Deleted is a soft delete: the file is gone, do not read it.
	Deleted bool
	// Binary is set when the file is not text (by type and extension, as the
	// plugin decides): a markdown indexer can skip it without reading chunks.
	Binary bool
	// Obfuscated is set for "f:" ids, whose path cannot be derived from the id.
	Obfuscated bool
	// Encrypted is set when the path or eden had to be decrypted.
	Encrypted bool
}

const (
	versionID        = "obsydian_livesync_version"
	syncInfoID       = "syncinfo"
	encryptedMeta    = `/\:`
	edenKeyV1        = "h:++encrypted"
	edenKeyV2        = "h:++encrypted-hkdf"
	encryptedChunkID = "h:+"
)

// rawDoc is the union of the fields of every document kind.
type rawDoc struct {
	ID          string               `json:"_id"`
	Rev         string               `json:"_rev"`
	Tombstone   bool                 `json:"_deleted"`
	Type        string               `json:"type"`
	Path        string               `json:"path"`
	Children    []string             `json:"children"`
	Data        json.RawMessage      `json:"data"`
	Eden        map[string]edenEntry `json:"eden"`
	Ctime       float64              `json:"ctime"`
	Mtime       float64              `json:"mtime"`
	Size        float64              `json:"size"`
	SoftDeleted bool                 `json:"deleted"`
	Encrypted   bool                 `json:"e_"`
	Version     float64              `json:"version"`
}

type edenEntry struct {
	Data string `json:"data"`
}

// Decoder decodes documents of one vault. The zero value decodes vaults
// without end-to-end encryption; NewDecoder makes one that decrypts. A
// Decoder is safe for concurrent use and caches derived keys, so keep one for
// the life of the follower.
type Decoder struct {
	keys *keyring
}

// NewDecoder returns a Decoder for the E2EE passphrase and the pbkdf2salt of
// _local/obsidian_livesync_sync_parameters (needed by V2 only). An empty
// passphrase gives a Decoder that cannot decrypt.
func NewDecoder(passphrase string, pbkdf2Salt []byte) *Decoder {
	if passphrase == "" {
		return &Decoder{}
	}
	return &Decoder{keys: &keyring{passphrase: passphrase, salt: pbkdf2Salt}}
}

// Decode classifies one raw document (a row's doc from _changes or
// _all_docs) and decodes what an indexer needs from it. Errors wrap
// ErrMalformed (this document only), ErrEncrypted (the vault needs a
// passphrase), ErrWrongPassphrase or ErrNoSalt; with ErrEncrypted the Doc
// still carries Kind, ID, Rev and E2EE.
func (d *Decoder) Decode(raw []byte) (Doc, error) {
	var r rawDoc
	if err := json.Unmarshal(raw, &r); err != nil {
		return Doc{}, fmt.Errorf("decode: %w: %w", ErrMalformed, err)
	}
	if r.ID == "" {
		return Doc{}, fmt.Errorf("decode: %w: no _id", ErrMalformed)
	}
	doc := Doc{ID: r.ID, Rev: r.Rev, E2EE: r.e2ee()}
	if r.Tombstone {
		doc.Kind, doc.Reason = tombstoneKind(&r)
		return doc, nil
	}
	if reason := skipReason(&r); reason != "" {
		doc.Reason = reason
		if r.ID == versionID {
			doc.Version = int(r.Version)
		}
		if r.ID == syncInfoID && r.Encrypted {
			// Its data is random letters: decrypting it only proves the
			// passphrase, early and cheaply.
			if _, err := d.decryptData(&r); err != nil {
				return doc, fmt.Errorf("decode %s: %w", r.ID, err)
			}
		}
		return doc, nil
	}
	if r.Type == "leaf" {
		doc.Kind = KindChunk
		data, err := d.decryptData(&r)
		if err != nil {
			return doc, fmt.Errorf("decode %s: %w", r.ID, err)
		}
		if strings.HasPrefix(data, compressedMarker) {
			if data, err = inflate(data); err != nil {
				return doc, fmt.Errorf("decode %s: %w", r.ID, err)
			}
		}
		doc.Data = data
		return doc, nil
	}
	note, reason, err := d.note(&r)
	if err != nil {
		doc.Kind = KindNote
		return doc, fmt.Errorf("decode %s: %w", r.ID, err)
	}
	if reason != "" {
		doc.Reason = reason
		return doc, nil
	}
	doc.Kind, doc.Note = KindNote, note
	return doc, nil
}

// note decodes a note document, returning a skip reason for notes whose
// decoded path is not a vault note.
func (d *Decoder) note(r *rawDoc) (*Note, string, error) {
	if r.e2ee() && d.keys == nil {
		return nil, "", ErrEncrypted
	}
	n := &Note{
		Type:       r.Type,
		Children:   r.Children,
		Size:       int64(r.Size),
		Ctime:      millis(r.Ctime),
		Mtime:      millis(r.Mtime),
		Deleted:    r.SoftDeleted,
		Obfuscated: strings.HasPrefix(r.ID, "f:"),
	}
	path, err := d.path(r, n)
	if err != nil {
		return nil, "", err
	}
	if path == "" {
		if n.Obfuscated {
			return nil, "obfuscated id without a path", nil
		}
		if path = pathFromID(r.ID); path == "" {
			return nil, "empty path", nil
		}
	}
	if strings.Contains(path, ":") {
		return nil, "path contains ':'", nil
	}
	if isFlagFile(path) {
		return nil, "flag or log file", nil
	}
	n.Path = path
	eden, decrypted, err := d.eden(r.Eden)
	if err != nil {
		return nil, "", fmt.Errorf("eden: %w", err)
	}
	n.Eden = eden
	n.Encrypted = n.Encrypted || decrypted
	if r.Children == nil && (r.Type == "notes" || r.Type == "") {
		n.Legacy = true
		if n.Inline, err = inlineData(r.Data); err != nil {
			return nil, "", err
		}
	}
	n.Binary = !(r.Type == "plain" || isPlainText(path))
	return n, "", nil
}

// inlineData reads a legacy note's data: a string or an array of strings.
func inlineData(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("%w: data is neither a string nor an array of strings", ErrMalformed)
	}
	return many, nil
}

// pathFromID recovers the path of a document written before plugin 0.18,
// which has no path field: split at the first ':' into prefix and body and
// drop the '/' that escapes a leading '_' (FORMAT.md §2).
func pathFromID(id string) string {
	prefix, body, found := strings.Cut(id, ":")
	if !found {
		prefix, body = "", id
	} else {
		prefix += ":"
	}
	if rest, ok := strings.CutPrefix(body, "/"); ok {
		return rest
	}
	return prefix + body
}

// isPlainText is the plugin's list of extensions it reads as text.
func isPlainText(path string) bool {
	for _, ext := range []string{".md", ".txt", ".svg", ".html", ".csv", ".css", ".js", ".xml", ".canvas"} {
		if strings.HasSuffix(path, ext) {
			return true
		}
	}
	return false
}

// isFlagFile reports the plugin's flag and log files, which its writer
// refuses but a reader should still ignore.
func isFlagFile(path string) bool {
	switch path {
	case "redflag.md", "redflag2.md", "redflag3.md", "flag_rebuild.md", "flag_fetch.md":
		return true
	}
	return strings.HasPrefix(path, "livesync_log_") || strings.HasPrefix(path, "LIVESYNC_LOG_")
}

func millis(ms float64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}
