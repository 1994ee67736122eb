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
	Corpus Corpus
	// Heartbeat is how often the server is asked to send a newline on an
	// idle _changes feed; a connection that stays silent for three
	// heartbeats is dropped and re-opened. Default 10s.
	Heartbeat time.Duration
	Logger    *slog.Logger
}

// Couch is a read-only connection to one LiveSync database: it never writes
// to CouchDB. It holds the vault's one Decoder, whose PBKDF2 key is derived
// once, and the vault settings from the milestone document, both read by
// Check.
type Couch struct {
	db         *kivik.DB
	client     *kivik.Client
	dec        *livesync.Decoder // nil until Check succeeds
	corpus     Corpus
	settings   livesync.Settings
	passphrase string
	heartbeat  time.Duration
	// source names the database in the index's feed_state (sourceName):
	// by its name, not the URL it is reached by.
	source string
	root   string // the server's URL, without credentials
	url    string // the database's URL, without credentials, for the log
	user   string
	log    *slog.Logger
}

// NewCouch returns the client of the database opts name, refusing options
// that cannot work (a URL that is not http(s), no database name) without
// asking the server anything. A Follower of it starts while CouchDB is
// away and runs Check itself, retrying until it succeeds; anything else
// calls Check before reading, or uses Connect.
func NewCouch(opts CouchOptions) (*Couch, error) {
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
	return &Couch{
		client:     client,
		db:         client.DB(opts.Database),
		corpus:     opts.Corpus,
		passphrase: opts.Passphrase,
		heartbeat:  opts.Heartbeat,
		source:     sourceName(opts.Database),
		root:       root,
		url:        root + "/" + opts.Database,
		user:       user,
		log:        opts.Logger.With(logComponent, "feed"),
	}, nil
}

// Connect is NewCouch and Check: a client of a database that is there and
// readable now, or an error saying what is wrong (see Check), for a
// command that reads the vault once (index, reconcile).
func Connect(ctx context.Context, opts CouchOptions) (*Couch, error) {
	c, err := NewCouch(opts)
	if err != nil {
		return nil, err
	}
	if err := c.Check(ctx); err != nil {
		c.client.Close()
		return nil, err
	}
	return c, nil
}

// Check asks the server what must be known before reading the vault: that
// the database is readable with the credentials (ErrUnauthorized, naming
// the user and URL, or ErrNoDatabase), and the vault's _local settings
// documents, refusing an end-to-end encrypted vault without its passphrase
// or with a wrong one (ErrEncryptedVault). Once it has succeeded, it is not
// asked again. Only the goroutine that reads the vault may call it.
func (c *Couch) Check(ctx context.Context) error {
	if c.checked() {
		return nil
	}
	if _, err := c.db.Stats(ctx); err != nil {
		return c.startupError(err)
	}
	return c.readSettings(ctx)
}

// checked reports whether Check has succeeded.
func (c *Couch) checked() bool { return c.dec != nil }

// startupError says which of the settings the server refused; the error
// keeps its HTTP status for describe.
func (c *Couch) startupError(err error) error {
	status := kivik.HTTPStatus(err)
	var named error
	switch status {
	case http.StatusUnauthorized:
		if c.user == "" {
			named = fmt.Errorf("%w: couchdb at %s requires a login (401 unauthorized), and no user is given", ErrUnauthorized, c.root)
		} else {
			named = fmt.Errorf("%w: couchdb at %s refused user %q (401 unauthorized)", ErrUnauthorized, c.root, c.user)
		}
	case http.StatusForbidden:
		named = fmt.Errorf("%w: user %q may not read database %q at %s (403 forbidden)", ErrUnauthorized, c.user, c.database(), c.root)
	case http.StatusNotFound:
		named = fmt.Errorf("%w: couchdb at %s has no database %q", ErrNoDatabase, c.root, c.database())
	default:
		return fmt.Errorf("couchdb at %s, database %q: %w", c.root, c.database(), err)
	}
	return &statusError{err: named, status: status}
}

// statusError is an error that names what a setting got wrong and keeps
// the HTTP status the server answered, which describe reads.
type statusError struct {
	err    error
	status int
}

func (e *statusError) Error() string   { return e.err.Error() }
func (e *statusError) Unwrap() error   { return e.err }
func (e *statusError) HTTPStatus() int { return e.status }

// readSettings GETs the milestone and sync-parameters documents (they never
// appear in _changes or _all_docs) and builds the Decoder. The vault is
// encrypted when the milestone says so or an encrypted chunk (id "h:+…")
// exists, for vaults older than the milestone; decoding that chunk proves
// the passphrase now rather than at the first note. The Decoder is kept only
// once it has passed that proof.
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
	dec := livesync.NewDecoder(c.passphrase, salt)
	if chunk != nil {
		if _, err := dec.Decode(chunk); err != nil {
			return c.decodeError(err)
		}
	}
	c.dec = dec
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
// than failing; a 401 is an expired login like any other request's, so it
// is retried.
func refusedRevsDiff(err error) bool {
	switch kivik.HTTPStatus(err) {
	case http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusNotImplemented:
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

// rejectedSeq reports whether err is the server refusing a request's
// sequence (400 bad request): a checkpoint it does not take.
func rejectedSeq(err error) bool { return kivik.HTTPStatus(err) == http.StatusBadRequest }

// database is the name of the database, for messages.
func (c *Couch) database() string { return c.db.Name() }
