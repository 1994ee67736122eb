package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/internal/retry"
	"github.com/vaultask/vaultask/internal/routine"
	"github.com/vaultask/vaultask/vault"
)

// FollowerOptions tune a Follower; zero fields take the defaults.
type FollowerOptions struct {
	// BatchRows and BatchBytes bound one transaction. Rows that arrive
	// together go into one: after a row the follower waits BatchQuiet for
	// the next, up to BatchWindow after the first. Defaults: 500 rows,
	// 8 MiB of documents, 5ms and 100ms.
	BatchRows   int
	BatchBytes  int
	BatchQuiet  time.Duration
	BatchWindow time.Duration
	// ParkRetry is the first delay before a note whose chunks are missing
	// is read again (besides whenever one of them arrives); it doubles up
	// to ParkTimeout, after which the note is reported incomplete.
	// Defaults: 2s and 2m.
	ParkRetry   time.Duration
	ParkTimeout time.Duration
	// ReconcileInterval runs a full reconcile this often, and at start when
	// the index's last run is older; zero never does.
	ReconcileInterval time.Duration
	// ChunkCacheBytes bounds the decoded chunks kept between rows. Default
	// 32 MiB.
	ChunkCacheBytes int
	// BackoffMin and BackoffMax bound the wait before reconnecting a
	// dropped feed. Defaults: 500ms and 1m.
	BackoffMin, BackoffMax time.Duration
	// StableAfter is how long a new connection must stay up (unless it
	// delivers a row first) to count as recovered: only then is the
	// backoff reset and "recovered" logged. Default 5s.
	StableAfter time.Duration
	// CheckInterval is how often, while following, the database is checked
	// for having been recreated under the follower (see checkDatabase), as
	// on every connection; a feed on a deleted database may just keep
	// sending heartbeats. Default 10s.
	CheckInterval time.Duration
	// ConfirmDelay is how long a reconcile that would remove more than half
	// of the indexed notes waits before listing the database again to
	// confirm. Default 15s.
	ConfirmDelay time.Duration
	// Clock is what the follower reads the time from and waits on: the
	// backoff between connections, the retries of parked notes, the
	// periodic reconcile and checks; default retry.System. Jitter draws
	// the backoff's jitter from [0, 1). Tests replace them.
	Clock  retry.Clock
	Jitter func() float64
	// OnBatch, when set, is called from the follower's goroutine after each
	// committed transaction, and OnReconcile after each full reconcile.
	// OnScanProgress, after each page a full reconcile lists and each
	// batch it writes, once Stats says so.
	OnBatch        func(BatchResult)
	OnReconcile    func(ReconcileResult)
	OnScanProgress func(FollowerStats)
	// ScanPageSize and ScanBatch are the documents of one _all_docs page
	// and the notes of one transaction of a full reconcile; zero takes the
	// Reconciler's and the index's defaults (1000 and 200).
	ScanPageSize, ScanBatch int
}

func (o *FollowerOptions) setDefaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 500
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 8 << 20
	}
	if o.ChunkCacheBytes <= 0 {
		o.ChunkCacheBytes = 32 << 20
	}
	def(&o.BatchQuiet, 5*time.Millisecond)
	def(&o.BatchWindow, 100*time.Millisecond)
	def(&o.ParkRetry, 2*time.Second)
	def(&o.ParkTimeout, 2*time.Minute)
	def(&o.BackoffMin, 500*time.Millisecond)
	def(&o.BackoffMax, time.Minute)
	def(&o.StableAfter, 5*time.Second)
	def(&o.CheckInterval, 10*time.Second)
	def(&o.ConfirmDelay, 15*time.Second)
	if o.Clock == nil {
		o.Clock = retry.System
	}
}

// Follower follows the database's _changes feed into the index: rows that
// arrive together are decoded, their notes reassembled and applied in one
// transaction with the feed's sequence as the checkpoint, so a restart at any
// moment resumes without loss or double work. On an empty index it first
// runs a full scan and follows from the sequence taken before it.
type Follower struct {
	couch *Couch
	store *index.Feed
	rec   *Reconciler
	opts  FollowerOptions
	clock retry.Clock
	log   *slog.Logger

	// Loop state, owned by the goroutine Open starts.
	since         string
	resumed       bool // the index had a checkpoint of the database at Open
	chunks        *chunkCache
	idPath        map[string]string // _id → the path its note has, for tombstones
	owner         map[string]string // vault.DocID(path) → the _id whose note is indexed there
	parking       *parking
	needScan      bool
	scanSince     string // the sequence the last full scan started from
	loadParked    bool   // the parked notes restored from note_status are yet to be read
	nextReconcile time.Time
	identity      string // of the database the checkpoint was taken in
	target        string // the database's update_seq when the connection opened
	failure       string // the kind of the current failure, "" while healthy
	warnedVersion bool
	noRevsDiff    bool // the server refused _revs_diff: the check asks by identity and sequence only

	mu    sync.Mutex
	stats FollowerStats

	life routine.Routine // the follower's goroutine
}

// NewFollower returns a Follower of c into store; Open starts it.
func NewFollower(c *Couch, store *index.Feed, opts FollowerOptions) *Follower {
	opts.setDefaults()
	rec := NewReconciler(c, store)
	rec.ConfirmDelay, rec.Clock = opts.ConfirmDelay, opts.Clock
	if opts.ScanPageSize > 0 {
		rec.PageSize = opts.ScanPageSize
	}
	rec.WriteBatch = opts.ScanBatch
	return &Follower{
		couch: c, store: store, rec: rec, opts: opts, clock: opts.Clock, log: c.log,
		chunks: newChunkCache(opts.ChunkCacheBytes),
		idPath: map[string]string{}, owner: map[string]string{},
		parking: newParking(opts.ParkRetry, opts.ParkTimeout),
	}
}

// Open reads the index's checkpoint of the database and the identity saved
// with it (moving one an earlier version kept under the server's URL to the
// database's name, see checkpoint.go) and starts following in a goroutine
// owned by the Follower.
// It returns at once, without asking CouchDB anything: the follower checks
// the database first (Couch.Check) and retries with backoff, as after any
// failure, while CouchDB is away, refuses the credentials, has no such
// database or needs a passphrase.
// Done is closed if the follower stops by itself on an error that retrying
// cannot fix (an index write, a document the passphrase does not decrypt).
func (f *Follower) Open(ctx context.Context) error {
	if err := f.couch.adoptCheckpoint(ctx, f.store); err != nil {
		return err
	}
	st, ok, err := f.store.Checkpoint(ctx, f.couch.source)
	if err != nil {
		return err
	}
	f.since, f.identity, f.resumed = st.Since, st.Identity, ok
	f.withStats(func(s *FollowerStats) { s.Checkpoint, s.Resumed = st.Since, ok })
	return f.life.Start(ctx, func(ctx context.Context) error {
		err := f.run(ctx)
		f.log.Info("stopped following", keySeq, f.since, keyErr, err)
		return err
	})
}

// fatalError stops the follower: retrying cannot help.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

func fatal(err error) error {
	if err == nil {
		return nil
	}
	return &fatalError{err}
}

var (
	// errFeedEnded is a continuous feed that ended without an error: real
	// CouchDB ends one on timeout or limit, a proxy may close it.
	errFeedEnded = errors.New("changes feed ended")
	// errReconcileDue ends a connection so the periodic reconcile runs
	// while no feed is open (rows read before a reconcile's listing must
	// not be applied after it).
	errReconcileDue = errors.New("reconcile due")
	// errRecreated ends a connection to a database that is not the one the
	// checkpoint was taken in any more: a full reconcile follows.
	errRecreated = errors.New("database recreated")
)

// run is the follower's loop: reconcile when needed, else follow one
// connection; reconnect with backoff after a failure.
func (f *Follower) run(ctx context.Context) error {
	if err := f.start(ctx); err != nil {
		return f.stopErr(ctx, err)
	}
	bo := &retry.Backoff{Min: f.opts.BackoffMin, Max: f.opts.BackoffMax, Jitter: f.opts.Jitter}
	for {
		var err error
		healthy := false
		switch {
		case !f.couch.checked():
			err = f.couch.Check(ctx)
		case f.needScan || f.reconcileDue():
			err = f.reconcile(ctx)
			healthy = err == nil
		case f.loadParked:
			err = f.retryParked(ctx, true)
			f.loadParked = err != nil
			healthy = err == nil
		default:
			healthy, err = f.follow(ctx)
		}
		if healthy {
			bo.Reset()
		}
		var fe *fatalError
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &fe):
			return fe.err
		case err == nil, errors.Is(err, errReconcileDue), errors.Is(err, errRecreated):
			continue
		case rejectedSeq(err) && !f.needScan:
			if f.since == f.scanSince {
				return fmt.Errorf("the server rejects the sequence a full scan started from (%q): %w", f.since, err)
			}
			f.log.Warn("the server rejected the checkpoint; running a full reconcile for a fresh one", keySeq, f.since, keyErr, err)
			f.needScan = true
			continue
		}
		wait := bo.Next()
		f.failed(err, wait)
		if err := f.clock.Sleep(ctx, wait); err != nil {
			return nil
		}
	}
}

// failed reports a failure that is retried after wait: a warning when its
// kind is new, and in the stats until the feed recovers.
func (f *Follower) failed(err error, wait time.Duration) {
	fl := f.couch.describe(err)
	if fl.kind != f.failure {
		f.failure = fl.kind
		msg := "changes feed failed: " + fl.text + "; retrying from the last checkpoint"
		if !f.couch.checked() {
			msg = "cannot start following the vault: " + fl.text + "; retrying"
		}
		f.log.Warn(msg, keySeq, f.since, keyWait, wait.Round(time.Millisecond), keyErr, err)
	} else {
		f.log.Debug("changes feed still failing", keyErr, err, keyWait, wait.Round(time.Millisecond))
	}
	f.withStats(func(s *FollowerStats) {
		s.Reconnects++
		s.LastError, s.LastErrorKind, s.LastErrorAt, s.Failing = fl.text, fl.kind, f.clock.Now(), true
	})
}

// stopErr is nil for a stop asked for through ctx.
func (f *Follower) stopErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	var fe *fatalError
	if errors.As(err, &fe) {
		return fe.err
	}
	return err
}

// start loads the index's _id → path map, and decides whether a full scan
// comes first: without a checkpoint (read by Open).
func (f *Follower) start(ctx context.Context) error {
	if !f.resumed {
		f.log.Info("no checkpoint for this database: scanning it whole before following", keyDB, f.couch.url)
		f.needScan = true
		return nil
	}
	if err := f.loadOwners(ctx); err != nil {
		return err
	}
	if f.opts.ReconcileInterval > 0 {
		last, err := f.store.LastRun(ctx)
		if err != nil {
			return fatal(err)
		}
		f.nextReconcile = last.Add(f.opts.ReconcileInterval)
		f.withStats(func(s *FollowerStats) { s.NextReconcile = f.nextReconcile })
	}
	return f.restoreParked(ctx)
}

// loadOwners reloads the _id → path map from the index.
func (f *Follower) loadOwners(ctx context.Context) error {
	paths, err := f.store.SourcePaths(ctx)
	if err != nil {
		return fatal(err)
	}
	f.idPath, f.owner = map[string]string{}, map[string]string{}
	for id, p := range paths {
		f.idPath[id] = p
		f.owner[vault.DocID(p)] = id
	}
	return nil
}

func (f *Follower) reconcileDue() bool {
	return f.opts.ReconcileInterval > 0 && !f.clock.Now().Before(f.nextReconcile)
}

// reconcile runs a full reconcile while no feed is open and continues from
// the sequence taken before its scan: the scan covers every change before
// it.
func (f *Follower) reconcile(ctx context.Context) error {
	started := f.clock.Now()
	f.withStats(func(s *FollowerStats) {
		s.Scanning, s.ScanListed, s.ScanDocuments, s.ScanDone, s.ScanTotal = true, 0, 0, 0, 0
	})
	progress := func(fn func(*FollowerStats)) {
		f.withStats(fn)
		if f.opts.OnScanProgress != nil {
			f.opts.OnScanProgress(f.Stats())
		}
	}
	// With a checkpoint, the database is the one it was taken in, or one
	// recreated under the follower: an empty one is waited out.
	res, err := f.rec.Run(ctx, ReconcileOptions{ResetCheckpoint: true, AwaitNotes: f.since != "",
		Listed: func(listed, total int) {
			progress(func(s *FollowerStats) { s.ScanListed, s.ScanDocuments = listed, total })
		},
		Progress: func(done, total int) {
			progress(func(s *FollowerStats) { s.ScanDone, s.ScanTotal = done, total })
		}})
	f.withStats(func(s *FollowerStats) { s.Scanning = false })
	if err != nil {
		return err
	}
	f.withStats(func(s *FollowerStats) {
		s.LastReconcile = ReconcileSummary{At: started, Took: f.clock.Now().Sub(started), Notes: res.Notes,
			Added: res.Sync.Added, Changed: res.Sync.Changed, Removed: res.Sync.Deleted, Kept: len(res.Kept),
			Incomplete: len(res.Incomplete), Skipped: len(res.Skipped)}
	})
	if f.opts.OnReconcile != nil {
		f.opts.OnReconcile(res)
	}
	f.since, f.scanSince, f.needScan, f.identity = res.Since, res.Since, false, res.Identity
	if f.opts.ReconcileInterval > 0 {
		f.nextReconcile = f.clock.Now().Add(f.opts.ReconcileInterval)
	}
	f.withStats(func(s *FollowerStats) { s.Reconciles++; s.Checkpoint = res.Since; s.NextReconcile = f.nextReconcile })
	if err := f.loadOwners(ctx); err != nil {
		return err
	}
	f.parking.clear()
	return f.restoreParked(ctx)
}

// restoreParked parks the notes note_status holds as waiting, to be read
// again before following: a restart retries them.
func (f *Follower) restoreParked(ctx context.Context) error {
	sts, err := f.store.NoteStatuses(ctx)
	if err != nil {
		return fatal(err)
	}
	for _, st := range sts {
		if st.State != vault.StatusSkipped {
			f.idPath[st.SourceID] = st.Path
		}
	}
	f.loadParked = f.parking.restore(sts, f.clock.Now()) > 0
	f.countParked()
	return nil
}

// checkDatabase compares the database with the one the checkpoint was taken
// in. A database recreated under the same name (LiveSync's "rebuild
// remote", or a restore) starts its sequence over, so following it from the
// checkpoint would miss its notes and keep notes it no longer has: this
// warns, asks for a full reconcile and returns errRecreated. Its LiveSync
// identity or a sequence behind the checkpoint gives it away; one written
// up to exactly the checkpoint's sequence (or past it) only by not knowing
// the revisions of the notes indexed last.
func (f *Follower) checkDatabase(ctx context.Context) error {
	st, err := f.couch.state(ctx)
	if err != nil {
		return err
	}
	f.target = st.UpdateSeq
	f.withStats(func(s *FollowerStats) { s.UpdateSeq = st.UpdateSeq })
	now, nowOK := seqNumber(st.UpdateSeq)
	at, atOK := seqNumber(f.since)
	switch {
	case f.identity != "" && st.Identity != f.identity:
		f.log.Warn("the database is not the one the checkpoint was taken in (its LiveSync setup is another: recreated, or another server's): reconciling it from scratch", keyDB, f.couch.url, keyWas, f.identity, keyNow, st.Identity)
	case nowOK && atOK && now < at:
		f.log.Warn("the database's sequence went backwards, so it was recreated or restored: reconciling it from scratch", keyDB, f.couch.url, keyUpdateSeq, st.UpdateSeq, keySeq, f.since)
	default:
		unknown, asked, err := f.unknownRecentRevs(ctx)
		if err != nil {
			return err
		}
		if unknown == 0 {
			if f.identity == "" {
				f.identity = st.Identity // saved with the next checkpoint
			}
			return nil
		}
		f.log.Warn("the database does not know the revisions the index holds, so it was recreated or restored: reconciling it from scratch",
			keyDB, f.couch.url, keyCount, unknown, keyTotal, asked, keyUpdateSeq, st.UpdateSeq, keySeq, f.since)
	}
	f.needScan = true
	return errRecreated
}

// unknownRecentRevs is how many of the revisions of the notes indexed last
// (asked of them) the database does not know: none once the server refused
// to say.
func (f *Follower) unknownRecentRevs(ctx context.Context) (unknown, asked int, err error) {
	if f.noRevsDiff {
		return 0, 0, nil
	}
	recent, err := f.store.RecentRevs(ctx, recentRevs)
	if err != nil {
		return 0, 0, fatal(err)
	}
	unknown, err = f.couch.unknownRevs(ctx, recent)
	if refusedRevsDiff(err) {
		// A proxy or a server that lets readers only GET: the feed still
		// works, and a recreated database is still noticed by its new
		// LiveSync setup or a lower sequence.
		f.noRevsDiff = true
		f.log.Warn("CouchDB refused POST _revs_diff, so a database recreated at the checkpoint's sequence is noticed only by the hourly reconcile", keyDB, f.couch.url, keyErr, err)
		return 0, 0, nil
	}
	return unknown, len(recent), err
}

// recentRevs is how many of the notes indexed last checkDatabase asks the
// database about: enough that a recreated database holding some of the same
// revisions (LiveSync's revisions of unchanged notes) still lacks one, few
// enough for one small request every CheckInterval.
const recentRevs = 20

// Done is closed when the follower has stopped.
func (f *Follower) Done() <-chan struct{} { return f.life.Done() }

// Close stops the follower and waits for it, at most until ctx is done. It
// returns the error that stopped it, nil for a clean stop.
func (f *Follower) Close(ctx context.Context) error { return f.life.Close(ctx) }
