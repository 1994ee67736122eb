package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	kivik "github.com/go-kivik/kivik/v4"
	"github.com/go-kivik/kivik/v4/couchdb" // registers the "couch" driver
	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
)

// Errors of Connect that a setting fixes; the caller says which setting.
var (
	// ErrUnauthorized means CouchDB refused the configured credentials, or
	// wants some.
	ErrUnauthorized = errors.New("couchdb refused the credentials")
	// ErrNoDatabase means the server has no database of the configured name.
	ErrNoDatabase = errors.New("no such database")
	// ErrEncryptedVault means the vault is end-to-end encrypted and no
	// passphrase is configured, or the passphrase does not decrypt it.
	ErrEncryptedVault = errors.New("vault is end-to-end encrypted")
)

// Log attribute keys of package feed.
const (
	logComponent  = "component"
	keyDB         = "db"
	keyID         = "id"
	keyPath       = "path"
	keyRev        = "rev"
	keySeq        = "seq"
	keyErr        = "err"
	keyReason     = "reason"
	keyCount      = "count"
	keyTotal      = "total"
	keyWait       = "wait"
	keyElapsed    = "elapsed"
	keyVersion    = "version"
	keyKnown      = "known"
	keyAdded      = "added"
	keyChanged    = "changed"
	keyRemoved    = "removed"
	keyIncomplete = "incomplete"
)

// keysBatch bounds the ids of one POST _all_docs {"keys": […]} (FORMAT.md §8
// suggests 100–250).
const keysBatch = 200

// CouchOptions say how to reach a LiveSync database.
type CouchOptions struct {
	// URL is the server root, e.g. http://127.0.0.1:5984. Credentials in it
	// are used (cookie auth) when User is empty, and never logged.
	URL      string
	Database string
	User     string
	Password string
	// CookieAuth logs in once through /_session and sends the session
	// cookie, instead of basic auth on every request.
	CookieAuth bool
	// Passphrase is LiveSync's E2EE passphrase; an encrypted vault needs it.
	Passphrase string
	// Corpus selects the notes that are indexed.
	Corpus index.Corpus
	// Heartbeat is how often the server is asked to send a newline on an
	// idle _changes feed; a connection that stays silent for three
	// heartbeats is dropped and re-opened. Default 10s.
	Heartbeat time.Duration
	Logger    *slog.Logger
}

// Couch is a read-only connection to one LiveSync database: it never writes
// to CouchDB. It holds the vault's one Decoder, whose PBKDF2 key is derived
// once, and the vault settings from the milestone document.
type Couch struct {
	db         *kivik.DB
	client     *kivik.Client
	dec        *livesync.Decoder
	corpus     index.Corpus
	settings   livesync.Settings
	passphrase string
	heartbeat  time.Duration
	// source names the database in the index's feed_state, without
	// credentials: a different server or database starts over.
	source string
	root   string // the server's URL, without credentials
	user   string
	log    *slog.Logger
}

// Connect checks that the database is readable with the credentials, reads
// the vault's _local settings documents and refuses an end-to-end encrypted
// vault without its passphrase (ErrEncryptedVault), naming the setting to
// provide. A 401 is ErrUnauthorized naming the user and URL.
func Connect(ctx context.Context, opts CouchOptions) (*Couch, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 10 * time.Second
	}
	u, err := url.Parse(strings.TrimRight(opts.URL, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("couchdb url %q: not an http(s) URL", redact(opts.URL))
	}
	if opts.Database == "" {
		return nil, fmt.Errorf("%w: no database name given", ErrNoDatabase)
	}
	user, password, cookie := opts.User, opts.Password, opts.CookieAuth
	if u.User != nil {
		if user == "" {
			user = u.User.Username()
			password, _ = u.User.Password()
			cookie = true
		}
		u.User = nil
	}
	root := u.String()
	kopts := []kivik.Option{couchdb.OptionHTTPClient(newHTTPClient(3 * opts.Heartbeat))}
	switch {
	case user == "":
	case cookie:
		kopts = append(kopts, couchdb.CookieAuth(user, password))
	default:
		kopts = append(kopts, couchdb.BasicAuth(user, password))
	}
	client, err := kivik.New("couch", root, kopts...)
	if err != nil {
		return nil, fmt.Errorf("couchdb %s: %w", root, err)
	}
	c := &Couch{
		client:     client,
		db:         client.DB(opts.Database),
		corpus:     opts.Corpus,
		passphrase: opts.Passphrase,
		heartbeat:  opts.Heartbeat,
		source:     "couchdb " + root + "/" + opts.Database,
		root:       root,
		user:       user,
		log:        opts.Logger.With(logComponent, "feed"),
	}
	if _, err := c.db.Stats(ctx); err != nil {
		c.client.Close()
		return nil, c.startupError(err, root, opts.Database, user)
	}
	if err := c.readSettings(ctx); err != nil {
		c.client.Close()
		return nil, err
	}
	return c, nil
}

func (c *Couch) startupError(err error, root, db, user string) error {
	switch kivik.HTTPStatus(err) {
	case http.StatusUnauthorized:
		if user == "" {
			return fmt.Errorf("%w: couchdb at %s requires a login (401 unauthorized), and no user is given", ErrUnauthorized, root)
		}
		return fmt.Errorf("%w: couchdb at %s refused user %q (401 unauthorized)", ErrUnauthorized, root, user)
	case http.StatusForbidden:
		return fmt.Errorf("%w: user %q may not read database %q at %s (403 forbidden)", ErrUnauthorized, user, db, root)
	case http.StatusNotFound:
		return fmt.Errorf("%w: couchdb at %s has no database %q", ErrNoDatabase, root, db)
	}
	return fmt.Errorf("couchdb at %s, database %q: %w", root, db, err)
}

// readSettings GETs the milestone and sync-parameters documents (they never
// appear in _changes or _all_docs) and builds the Decoder. The vault is
// encrypted when the milestone says so or an encrypted chunk (id "h:+…")
// exists, for vaults older than the milestone; decoding that chunk proves
// the passphrase now rather than at the first note.
func (c *Couch) readSettings(ctx context.Context) error {
	dbName := c.db.Name()
	raw, err := c.getRaw(ctx, livesync.MilestoneID)
	if err != nil {
		return err
	}
	if raw != nil {
		m, err := livesync.ParseMilestone(raw)
		if err != nil {
			return fmt.Errorf("database %s: %w", dbName, err)
		}
		c.settings = m.Settings
		if m.Locked {
			c.log.Warn("the LiveSync remote is locked: a rebuild is in progress; notes may be missing until it finishes", keyDB, dbName)
		}
	}
	chunk, err := c.encryptedChunk(ctx)
	if err != nil {
		return err
	}
	if (c.settings.Encrypt || chunk != nil) && c.passphrase == "" {
		return fmt.Errorf("%w: database %q needs LiveSync's passphrase, and none is given", ErrEncryptedVault, dbName)
	}
	var salt []byte
	if c.passphrase != "" {
		params, err := c.getRaw(ctx, livesync.SyncParametersID)
		if err != nil {
			return err
		}
		if params != nil {
			p, err := livesync.ParseSyncParameters(params)
			if err != nil {
				return fmt.Errorf("database %s: %w", dbName, err)
			}
			salt = p.PBKDF2Salt
		}
	}
	c.dec = livesync.NewDecoder(c.passphrase, salt)
	if chunk != nil {
		if _, err := c.dec.Decode(chunk); err != nil {
			return c.decodeError(err)
		}
	}
	return nil
}

// encryptedChunk returns one chunk document whose id marks end-to-end
// encryption ("h:+"), or nil.
func (c *Couch) encryptedChunk(ctx context.Context) (json.RawMessage, error) {
	rs := c.db.AllDocs(ctx, kivik.Params(map[string]any{"include_docs": true, "limit": 1, "startkey": "h:+", "endkey": "h:+\ufff0"}))
	defer rs.Close()
	var raw json.RawMessage
	if rs.Next() {
		if err := rs.ScanDoc(&raw); err != nil {
			return nil, fmt.Errorf("probe for encrypted chunks: %w", err)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("probe for encrypted chunks: %w", err)
	}
	return raw, nil
}

// getRaw GETs one document; a missing one is nil without error.
func (c *Couch) getRaw(ctx context.Context, id string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.db.Get(ctx, id).ScanDoc(&raw)
	if kivik.HTTPStatus(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", id, err)
	}
	return raw, nil
}

// decodeError turns the decoder's vault-wide errors into ErrEncryptedVault;
// they stop a follower, since no later document can be read either.
func (c *Couch) decodeError(err error) error {
	switch {
	case errors.Is(err, livesync.ErrEncrypted):
		return fmt.Errorf("%w: database %q needs LiveSync's passphrase, and none is given: %w", ErrEncryptedVault, c.db.Name(), err)
	case errors.Is(err, livesync.ErrWrongPassphrase):
		return fmt.Errorf("%w: the passphrase given does not decrypt database %q: %w", ErrEncryptedVault, c.db.Name(), err)
	case errors.Is(err, livesync.ErrNoSalt):
		return fmt.Errorf("%w: database %q has no readable %s: %w", ErrEncryptedVault, c.db.Name(), livesync.SyncParametersID, err)
	}
	return err
}

// fatalDecode reports whether a Decode error concerns the whole vault rather
// than one document.
func fatalDecode(err error) bool {
	return errors.Is(err, livesync.ErrEncrypted) || errors.Is(err, livesync.ErrWrongPassphrase) || errors.Is(err, livesync.ErrNoSalt)
}

// warnNewerFormat warns of a version document newer than the decoder knows.
func (c *Couch) warnNewerFormat(version int) {
	c.log.Warn("the database format is newer than this reader knows; notes may be misread", keyVersion, version, keyKnown, livesync.FormatVersion)
}

// Source is the name of this database in the index's feed_state.
func (c *Couch) Source() string { return c.source }

// Close releases the client's connections.
func (c *Couch) Close() error { return c.client.Close() }

// updateSeq is the database's current sequence: a scan that starts after
// reading it may be followed by _changes since it without losing anything.
func (c *Couch) updateSeq(ctx context.Context) (string, error) {
	st, err := c.db.Stats(ctx)
	if err != nil {
		return "", fmt.Errorf("database info: %w", err)
	}
	return st.UpdateSeq, nil
}

// dbState is what tells whether the database is still the one a checkpoint
// was taken in.
type dbState struct {
	UpdateSeq string
	// Identity names the database's LiveSync setup: when its milestone was
	// created and its key-derivation salt, both written anew when LiveSync
	// rebuilds the remote. "" for a database LiveSync never set up.
	Identity string
}

// state reads the database's sequence and identity.
func (c *Couch) state(ctx context.Context) (dbState, error) {
	seq, err := c.updateSeq(ctx)
	if err != nil {
		return dbState{}, err
	}
	id, err := c.identity(ctx)
	if err != nil {
		return dbState{}, err
	}
	return dbState{UpdateSeq: seq, Identity: id}, nil
}

// identity reads the milestone and sync-parameter documents that LiveSync
// writes once per remote database (see dbState.Identity).
func (c *Couch) identity(ctx context.Context) (string, error) {
	var parts []string
	milestone, err := c.getRaw(ctx, livesync.MilestoneID)
	if err != nil {
		return "", err
	}
	if milestone != nil {
		m, err := livesync.ParseMilestone(milestone)
		if err != nil {
			return "", fmt.Errorf("database %s: %w", c.db.Name(), err)
		}
		parts = append(parts, fmt.Sprintf("milestone created %d", m.Created.UnixMilli()))
	}
	params, err := c.getRaw(ctx, livesync.SyncParametersID)
	if err != nil {
		return "", err
	}
	if params != nil {
		if p, err := livesync.ParseSyncParameters(params); err == nil {
			sum := sha256.Sum256(p.PBKDF2Salt)
			parts = append(parts, "salt "+hex.EncodeToString(sum[:6]))
		}
	}
	return strings.Join(parts, ", "), nil
}

// unknownRevs is how many of revs (_id → revision) the database has never
// held, asked with POST _revs_diff. A database keeps every revision's id in
// its documents' revision trees, past later edits, deletions and
// compaction, so a revision it does not know means another database (one
// recreated under the same name, or a restore from before it was written).
// It is read-only, answered by CouchDB 3 and PouchDB alike, and unlike a
// sequence or an instance start time it does not depend on how a server
// numbers its changes.
func (c *Couch) unknownRevs(ctx context.Context, revs map[string]string) (int, error) {
	if len(revs) == 0 {
		return 0, nil
	}
	ask := make(map[string][]string, len(revs))
	for id, rev := range revs {
		ask[id] = []string{rev}
	}
	rs := c.db.RevsDiff(ctx, ask)
	defer rs.Close()
	n := 0
	for rs.Next() {
		var v struct {
			Missing []string `json:"missing"`
		}
		if err := rs.ScanValue(&v); err != nil {
			return 0, fmt.Errorf("revisions diff: %w", err)
		}
		n += len(v.Missing)
	}
	if err := rs.Err(); err != nil {
		return 0, fmt.Errorf("revisions diff: %w", err)
	}
	return n, nil
}

// refusedRevsDiff reports whether err is the server refusing _revs_diff
// itself (no permission, or a proxy that allows no such request), rather
// than failing.
func refusedRevsDiff(err error) bool {
	switch kivik.HTTPStatus(err) {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return true
	}
	return false
}

// seqNumber is the number a sequence starts with: all of it on PouchDB, the
// part before '-' of CouchDB's opaque sequences, which is the sum of the
// shards' sequences and so grows with every change. ok is false for anything
// else.
func seqNumber(seq string) (n uint64, ok bool) {
	digits, _, _ := strings.Cut(seq, "-")
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil
}

// fetch gets documents by id with POST _all_docs?include_docs=true
// {"keys": […]}, in batches. Ids that are missing or deleted are absent from
// the result.
func (c *Couch) fetch(ctx context.Context, ids []string) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(ids))
	for start := 0; start < len(ids); start += keysBatch {
		keys := ids[start:min(start+keysBatch, len(ids))]
		rs := c.db.AllDocs(ctx, kivik.Params(map[string]any{"include_docs": true, "keys": keys}))
		for rs.Next() {
			id, err := rs.ID()
			if err != nil || id == "" {
				continue // a not_found row
			}
			var raw json.RawMessage
			if rs.ScanDoc(&raw) != nil || len(raw) == 0 || string(raw) == "null" {
				continue // a deleted document: no body
			}
			out[id] = raw
		}
		if err := rs.Err(); err != nil {
			return nil, fmt.Errorf("fetch %d documents by key: %w", len(keys), err)
		}
		rs.Close()
	}
	return out, nil
}

// currentRevs looks up the current revision of each of ids with
// POST _all_docs {"keys": […]} (no documents): a missing or deleted
// document has none and is absent from the result.
func (c *Couch) currentRevs(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for start := 0; start < len(ids); start += keysBatch {
		keys := ids[start:min(start+keysBatch, len(ids))]
		rs := c.db.AllDocs(ctx, kivik.Params(map[string]any{"keys": keys}))
		for rs.Next() {
			var v struct {
				Rev     string `json:"rev"`
				Deleted bool   `json:"deleted"`
			}
			id, err := rs.ID()
			if err != nil || id == "" || rs.ScanValue(&v) != nil || v.Deleted || v.Rev == "" {
				continue // a not_found or deleted row
			}
			out[id] = v.Rev
		}
		if err := rs.Err(); err != nil {
			return nil, fmt.Errorf("look up %d revisions: %w", len(keys), err)
		}
		rs.Close()
	}
	return out, nil
}

// derivedID is the _id LiveSync gives path in this vault: of two documents
// that claim one path, the one with this id is the current one.
func (c *Couch) derivedID(path string) string {
	obfuscation := ""
	if c.settings.UsePathObfuscation {
		obfuscation = c.passphrase
	}
	return livesync.DocumentID(path, c.settings.HandleFilenameCaseSensitive, obfuscation)
}

// skipReason says why a live decoded note is not indexed, for its status,
// or "" when it is: a markdown note of the corpus at a clean path (which its
// Path is then normalised to). Binary attachments are never read.
func (c *Couch) skipReason(n *livesync.Note) string {
	clean, err := vault.CleanPath(n.Path)
	if err != nil {
		return err.Error()
	}
	n.Path = clean
	if n.Binary {
		return "binary attachment: only text notes are indexed"
	}
	return c.corpus.Excluded(n.Path)
}

// indexable reports whether a decoded note is indexed (see skipReason).
func (c *Couch) indexable(n *livesync.Note) bool {
	return !n.Deleted && c.skipReason(n) == ""
}

// readNotes reassembles notes from src, fetching every chunk src lacks (for
// all the notes together) with one batched keys lookup. texts[i] is set when
// errs[i] is nil; errs[i] wraps livesync.ErrMissingChunks or ErrSizeMismatch
// for a note that must wait. The returned error is a failure of the lookup or
// a vault-wide decoding error.
func (c *Couch) readNotes(ctx context.Context, notes []*livesync.Note, src *chunkCache) (texts []string, errs []error, err error) {
	texts, errs = make([]string, len(notes)), make([]error, len(notes))
	var want []string
	seen := map[string]bool{}
	for i, n := range notes {
		b, err := n.Read(src)
		texts[i], errs[i] = string(b), err
		var missing *livesync.MissingChunksError
		if errors.As(err, &missing) {
			for _, id := range missing.IDs {
				if !seen[id] {
					seen[id] = true
					want = append(want, id)
				}
			}
		}
	}
	if len(want) == 0 {
		return texts, errs, nil
	}
	got, err := c.fetch(ctx, want)
	if err != nil {
		return nil, nil, err
	}
	// The fetched chunks are read from here, so that a bounded src that
	// evicts them again still lets the notes be read.
	fetched := overlay{top: livesync.ChunkMap{}, under: src}
	for id, raw := range got {
		doc, err := c.dec.Decode(raw)
		if err != nil {
			if fatalDecode(err) {
				return nil, nil, fatal(c.decodeError(err))
			}
			c.log.Warn("skip malformed chunk", keyID, id, keyErr, err)
			continue
		}
		if doc.Kind == livesync.KindChunk {
			fetched.top[doc.ID] = doc.Data
			src.put(doc.ID, doc.Data)
		}
	}
	for i, n := range notes {
		if errors.Is(errs[i], livesync.ErrMissingChunks) {
			b, err := n.Read(fetched)
			texts[i], errs[i] = string(b), err
		}
	}
	return texts, errs, nil
}

// overlay is a ChunkSource that looks in top first.
type overlay struct {
	top   livesync.ChunkMap
	under livesync.ChunkSource
}

func (o overlay) Chunks(ids []string) (map[string]string, error) {
	under, err := o.under.Chunks(ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		if data, ok := o.top[id]; ok {
			out[id] = data
		} else if data, ok := under[id]; ok {
			out[id] = data
		}
	}
	return out, nil
}

// newHTTPClient is kivik's HTTP client: every read on a connection must see
// data within idle, so a _changes feed whose heartbeats stop (a peer gone
// without a FIN, a stalled proxy) fails instead of hanging forever.
func newHTTPClient(idle time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 15 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &idleConn{Conn: conn, idle: idle}, nil
	}
	return &http.Client{Transport: tr}
}

type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

// redact drops credentials from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
