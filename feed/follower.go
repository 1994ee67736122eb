package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"time"

	kivik "github.com/go-kivik/kivik/v4"
	"github.com/vaultask/vaultask/feed/livesync"
	"github.com/vaultask/vaultask/index"
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
	// for having been recreated under the follower (its sequence behind
	// the checkpoint, or its LiveSync identity changed), as on every
	// connection; a feed on a deleted database may just keep sending
	// heartbeats. Default 1m.
	CheckInterval time.Duration
	// ConfirmDelay is how long a reconcile that would remove more than half
	// of the indexed notes waits before listing the database again to
	// confirm. Default 15s.
	ConfirmDelay time.Duration
	// Sleep waits out a backoff and Jitter draws from [0, 1); tests
	// replace them.
	Sleep  func(ctx context.Context, d time.Duration) error
	Jitter func() float64
	// OnBatch, when set, is called from the follower's goroutine after each
	// committed transaction.
	OnBatch func(BatchResult)
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
	def(&o.CheckInterval, time.Minute)
	def(&o.ConfirmDelay, 15*time.Second)
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
}

// BatchResult is one committed transaction of the follower.
type BatchResult struct {
	index.ApplyResult
	// Rows is the number of _changes rows the transaction covers (zero for
	// a retry of parked notes).
	Rows       int
	Checkpoint string
	// Parked is the number of notes waiting for chunks after the batch.
	Parked int
}

// FollowerStats is a snapshot of what a Follower has done.
type FollowerStats struct {
	Checkpoint string
	Connected  bool
	Rows       int
	Batches    int
	Applied    index.ApplyResult
	// Parked notes wait for chunks; Incomplete ones (a subset) have waited
	// longer than ParkTimeout. Both are in the index's note_status.
	Parked, Incomplete int
	Reconnects         int
	Reconciles         int
	CachedChunks       int
	// LastError describes the last failure, in words a user acts on, and
	// LastErrorAt is when it happened; both stay after a recovery.
	LastError   string
	LastErrorAt time.Time
	// UpdateSeq is the database's sequence when it was last checked.
	UpdateSeq string
	// Failing is set from a failure until the feed recovers.
	Failing bool
}

// Follower follows the database's _changes feed into the index: rows that
// arrive together are decoded, their notes reassembled and applied in one
// transaction with the feed's sequence as the checkpoint, so a restart at any
// moment resumes without loss or double work. On an empty index it first
// runs a full scan and follows from the sequence taken before it.
type Follower struct {
	couch *Couch
	store *index.Store
	rec   *Reconciler
	opts  FollowerOptions
	log   *slog.Logger

	// Loop state, owned by the goroutine Open starts.
	since         string
	chunks        *chunkCache
	idPath        map[string]string // _id → the path its note has, for tombstones
	owner         map[string]string // index.DocID(path) → the _id whose note is indexed there
	parked        map[string]*parkedNote
	waiting       map[string]map[string]bool // chunk id → parked note ids
	skipped       map[string]bool            // ids with a skipped row in note_status
	needScan      bool
	scanSince     string // the sequence the last full scan started from
	loadParked    bool   // the parked notes restored from note_status are yet to be read
	nextReconcile time.Time
	identity      string // of the database the checkpoint was taken in
	failure       string // the kind of the current failure, "" while healthy
	warnedVersion bool

	mu    sync.Mutex
	stats FollowerStats

	loop
}

// parkedNote is a note revision that could not be read whole yet.
type parkedNote struct {
	doc     livesync.Doc
	missing []string
	reason  string
	state   string // index.StatusPending or index.StatusIncomplete
	since   time.Time
	delay   time.Duration
	next    time.Time // next timed retry; zero once incomplete
}

// NewFollower returns a Follower of c into store; Open starts it.
func NewFollower(c *Couch, store *index.Store, opts FollowerOptions) *Follower {
	opts.setDefaults()
	rec := NewReconciler(c, store)
	rec.ConfirmDelay, rec.Sleep = opts.ConfirmDelay, opts.Sleep
	return &Follower{
		couch: c, store: store, rec: rec, opts: opts, log: c.log,
		chunks: newChunkCache(opts.ChunkCacheBytes),
		idPath: map[string]string{}, owner: map[string]string{},
		parked: map[string]*parkedNote{}, waiting: map[string]map[string]bool{}, skipped: map[string]bool{},
	}
}

// Open starts following in a goroutine owned by the Follower. It returns at
// once; Done is closed if the follower stops by itself on an error that
// retrying cannot fix (an index write, an undecryptable vault).
func (f *Follower) Open(ctx context.Context) error {
	return f.spawn(ctx, func(ctx context.Context) error {
		err := f.run(ctx)
		f.log.Info("stopped following", keySeq, f.since, keyErr, err)
		return err
	})
}

// Stats returns a snapshot of the follower's counters.
func (f *Follower) Stats() FollowerStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

func (f *Follower) update(fn func(*FollowerStats)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.stats)
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
	bo := &backoff{min: f.opts.BackoffMin, max: f.opts.BackoffMax, jitter: f.opts.Jitter}
	for {
		var err error
		healthy := false
		switch {
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
		var fe *fatalError
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &fe):
			return fe.err
		case err == nil, errors.Is(err, errReconcileDue), errors.Is(err, errRecreated):
			continue
		case kivik.HTTPStatus(err) == http.StatusBadRequest && !f.needScan:
			if f.since == f.scanSince {
				return fmt.Errorf("the server rejects the sequence a full scan started from (%q): %w", f.since, err)
			}
			f.log.Warn("the server rejected the checkpoint; running a full reconcile for a fresh one", keySeq, f.since, keyErr, err)
			f.needScan = true
			continue
		}
		if healthy {
			bo.reset()
		}
		wait := bo.next()
		fl := f.couch.describe(err)
		if fl.kind != f.failure {
			f.failure = fl.kind
			f.log.Warn("changes feed failed: "+fl.text+"; retrying from the last checkpoint", keySeq, f.since, keyWait, wait.Round(time.Millisecond), keyErr, err)
		} else {
			f.log.Debug("changes feed still failing", keyErr, err, keyWait, wait.Round(time.Millisecond))
		}
		f.update(func(s *FollowerStats) {
			s.Reconnects++
			s.LastError, s.LastErrorAt, s.Failing = fl.text, time.Now(), true
		})
		if err := f.opts.Sleep(ctx, wait); err != nil {
			return nil
		}
	}
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

// start loads the checkpoint and the index's _id → path map, and decides
// whether a full scan comes first.
func (f *Follower) start(ctx context.Context) error {
	since, ok, err := f.store.Checkpoint(ctx, f.couch.source)
	if err != nil {
		return fatal(err)
	}
	f.since = since
	f.update(func(s *FollowerStats) { s.Checkpoint = since })
	if f.identity, err = f.store.FeedIdentity(ctx, f.couch.source); err != nil {
		return fatal(err)
	}
	if !ok {
		f.log.Info("no checkpoint for this database: scanning it whole before following", keyDB, f.couch.source)
		f.needScan = true
		return nil
	}
	if err := f.seed(ctx); err != nil {
		return err
	}
	if f.opts.ReconcileInterval > 0 {
		st, err := f.store.Stats(ctx)
		if err != nil {
			return fatal(err)
		}
		last, _ := time.Parse(time.RFC3339, st.LastRun)
		f.nextReconcile = last.Add(f.opts.ReconcileInterval)
	}
	return f.restoreParked(ctx)
}

// seed reloads the _id → path map from the index.
func (f *Follower) seed(ctx context.Context) error {
	paths, err := f.store.SourcePaths(ctx)
	if err != nil {
		return fatal(err)
	}
	f.idPath, f.owner = map[string]string{}, map[string]string{}
	for id, p := range paths {
		f.idPath[id] = p
		f.owner[index.DocID(p)] = id
	}
	return nil
}

func (f *Follower) reconcileDue() bool {
	return f.opts.ReconcileInterval > 0 && !time.Now().Before(f.nextReconcile)
}

// reconcile runs a full reconcile while no feed is open and continues from
// the sequence taken before its scan: the scan covers every change before
// it.
func (f *Follower) reconcile(ctx context.Context) error {
	res, err := f.rec.Run(ctx, ReconcileOptions{ResetCheckpoint: true})
	if err != nil {
		return err
	}
	f.since, f.scanSince, f.needScan, f.identity = res.Since, res.Since, false, res.Identity
	f.nextReconcile = time.Now().Add(f.opts.ReconcileInterval)
	f.update(func(s *FollowerStats) { s.Reconciles++; s.Checkpoint = res.Since })
	if err := f.seed(ctx); err != nil {
		return err
	}
	f.parked, f.waiting, f.skipped = map[string]*parkedNote{}, map[string]map[string]bool{}, map[string]bool{}
	return f.restoreParked(ctx)
}

// restoreParked parks the notes note_status holds as waiting, to be read
// again before following: a restart retries them.
func (f *Follower) restoreParked(ctx context.Context) error {
	sts, err := f.store.NoteStatuses(ctx)
	if err != nil {
		return fatal(err)
	}
	parked := 0
	for _, st := range sts {
		if st.State == index.StatusSkipped {
			f.skipped[st.SourceID] = true
			continue
		}
		parked++
		f.parked[st.SourceID] = &parkedNote{
			doc:   livesync.Doc{ID: st.SourceID, Rev: st.Rev, Kind: livesync.KindNote, Note: &livesync.Note{Path: st.Path}},
			state: st.State, reason: st.Reason, since: st.Since, delay: f.opts.ParkRetry,
			next: time.Now(),
		}
		f.idPath[st.SourceID] = st.Path
	}
	f.loadParked = parked > 0
	f.countParked()
	return nil
}

// checkDatabase compares the database with the one the checkpoint was taken
// in. A database recreated under the same name (LiveSync's "rebuild
// remote", or a restore) starts its sequence over, so following it from the
// checkpoint would miss its notes and keep notes it no longer has: this
// warns, asks for a full reconcile and returns errRecreated.
func (f *Follower) checkDatabase(ctx context.Context) error {
	st, err := f.couch.state(ctx)
	if err != nil {
		return err
	}
	f.update(func(s *FollowerStats) { s.UpdateSeq = st.UpdateSeq })
	now, nowOK := seqNumber(st.UpdateSeq)
	at, atOK := seqNumber(f.since)
	switch {
	case f.identity != "" && st.Identity != f.identity:
		f.log.Warn("the database was recreated (its LiveSync setup is new): reconciling it from scratch", keyDB, f.couch.source, "was", f.identity, "now", st.Identity)
	case nowOK && atOK && now < at:
		f.log.Warn("the database's sequence went backwards, so it was recreated or restored: reconciling it from scratch", keyDB, f.couch.source, "update_seq", st.UpdateSeq, keySeq, f.since)
	default:
		if f.identity == "" {
			f.identity = st.Identity // saved with the next checkpoint
		}
		return nil
	}
	f.needScan = true
	return errRecreated
}

// follow reads one _changes connection until it fails, ctx is done or a
// reconcile is due. healthy reports a connection that delivered a row or
// stayed up for StableAfter.
func (f *Follower) follow(ctx context.Context) (healthy bool, err error) {
	if err := f.checkDatabase(ctx); err != nil {
		return false, err
	}
	conn, cancel := context.WithCancel(ctx)
	defer cancel()
	rows := make(chan feedRow, f.opts.BatchRows)
	errc := make(chan error, 1)
	since := f.since
	var wg sync.WaitGroup
	wg.Add(1)
	// The request runs in the reader goroutine: a server may hold the
	// response headers back until its first heartbeat or change, and the
	// loop below must keep serving its timers meanwhile.
	go func() {
		defer wg.Done()
		defer close(rows)
		ch := f.couch.db.Changes(conn, kivik.Params(map[string]any{
			"feed":         "continuous",
			"since":        since,
			"include_docs": true,
			"heartbeat":    int(f.couch.heartbeat / time.Millisecond),
		}))
		defer ch.Close()
		if err := ch.Err(); err != nil {
			errc <- fmt.Errorf("open changes feed: %w", err)
			return
		}
		f.update(func(s *FollowerStats) { s.Connected = true })
		errc <- readChanges(conn, ch, rows)
	}()
	defer func() {
		cancel()
		wg.Wait()
		f.update(func(s *FollowerStats) { s.Connected = false })
	}()

	markHealthy := func() {
		if healthy {
			return
		}
		healthy = true
		if f.failure != "" {
			f.failure = ""
			f.log.Info("changes feed recovered", keySeq, f.since)
			f.update(func(s *FollowerStats) { s.Failing = false })
		}
	}
	stable := time.NewTimer(f.opts.StableAfter)
	defer stable.Stop()
	check := time.NewTicker(f.opts.CheckInterval)
	defer check.Stop()
	for {
		retry, stopRetry := f.retryTimer()
		recon, stopRecon := f.reconcileTimer()
		var batch []feedRow
		closed := false
		select {
		case <-ctx.Done():
		case <-stable.C:
			markHealthy()
		case <-retry:
			err = f.retryParked(ctx, false)
		case <-recon:
			err = errReconcileDue
		case <-check.C:
			err = f.checkDatabase(ctx)
		case r, ok := <-rows:
			if !ok {
				closed = true
				break
			}
			markHealthy()
			batch, closed = f.collect(ctx, r, rows)
		}
		stopRetry()
		stopRecon()
		if err == nil && len(batch) > 0 {
			err = f.applyRows(ctx, batch)
		}
		switch {
		case ctx.Err() != nil:
			return healthy, ctx.Err()
		case err != nil:
			return healthy, err
		case closed:
			return healthy, <-errc
		}
	}
}

// collect gathers the rows that follow first with gaps under BatchQuiet,
// for at most BatchWindow and up to the batch bounds. closed reports the end
// of the feed.
func (f *Follower) collect(ctx context.Context, first feedRow, rows <-chan feedRow) (batch []feedRow, closed bool) {
	batch = []feedRow{first}
	size := len(first.doc)
	window := time.NewTimer(f.opts.BatchWindow)
	defer window.Stop()
	quiet := time.NewTimer(f.opts.BatchQuiet)
	defer quiet.Stop()
	for len(batch) < f.opts.BatchRows && size < f.opts.BatchBytes {
		select {
		case <-ctx.Done():
			return batch, false
		case <-window.C:
			return batch, false
		case <-quiet.C:
			return batch, false
		case r, ok := <-rows:
			if !ok {
				return batch, true
			}
			batch = append(batch, r)
			size += len(r.doc)
			quiet.Reset(f.opts.BatchQuiet)
		}
	}
	return batch, false
}

// retryTimer fires when the earliest pending parked note is due; stop
// releases it.
func (f *Follower) retryTimer() (<-chan time.Time, func()) {
	var next time.Time
	for _, p := range f.parked {
		if !p.next.IsZero() && (next.IsZero() || p.next.Before(next)) {
			next = p.next
		}
	}
	if next.IsZero() {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(next))
	return t.C, func() { t.Stop() }
}

func (f *Follower) reconcileTimer() (<-chan time.Time, func()) {
	if f.opts.ReconcileInterval <= 0 {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(f.nextReconcile))
	return t.C, func() { t.Stop() }
}

// feedRow is one _changes row.
type feedRow struct {
	id, seq string
	doc     json.RawMessage
}

// readChanges sends the rows of one continuous feed to rows until it ends.
//
// kivik v4.5.2 panics inside Changes.Next when a continuous feed ends
// cleanly (it reads the last_seq of metadata that continuous feeds never
// have). Real CouchDB ends a feed that way on timeout or limit, and proxies
// close idle streams, so the panic is recovered here, in the only goroutine
// that calls Next, and reported as errFeedEnded: kivik's iterator releases
// its lock in a deferred unlock and the caller cancels the connection's
// context and closes the iterator, so nothing stays held. Keeping kivik
// (rather than parsing the stream by hand) keeps one HTTP, auth and error
// path for every request.
func readChanges(ctx context.Context, ch *kivik.Changes, rows chan<- feedRow) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w (kivik: %v)", errFeedEnded, p)
		}
	}()
	// Iterator, unlike Changes.ScanDoc, does not read the iterator's state
	// unlocked while its context goroutine may be closing it.
	for change, err := range ch.Iterator() {
		if err != nil {
			return err
		}
		if change.ID == "" {
			continue // a final {"last_seq": …} line parses as a row without an id
		}
		var raw json.RawMessage
		if err := change.ScanDoc(&raw); err != nil || len(raw) == 0 || string(raw) == "null" {
			if !change.Deleted {
				return fmt.Errorf("change %s without its document: %w", change.ID, err)
			}
			raw, _ = json.Marshal(map[string]any{"_id": change.ID, "_deleted": true})
		}
		select {
		case rows <- feedRow{id: change.ID, seq: change.Seq, doc: raw}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errFeedEnded
}

// op is the last thing a batch says about one _id.
type op struct {
	doc livesync.Doc // KindNote or KindTombstone
	at  int          // position of the row that set it
}

// applyRows decodes a batch of rows and commits it with the last row's
// sequence as the checkpoint.
func (f *Follower) applyRows(ctx context.Context, batch []feedRow) error {
	ops := map[string]op{}
	retry := map[string]bool{}
	for i, r := range batch {
		doc, err := f.couch.dec.Decode(r.doc)
		if err != nil {
			if fatalDecode(err) {
				return fatal(f.couch.decodeError(err))
			}
			f.log.Warn("skip malformed document", keyID, r.id, keySeq, r.seq, keyErr, err)
			if doc.Kind == livesync.KindNote {
				ops[r.id] = op{doc: livesync.Doc{ID: r.id, Rev: doc.Rev, Kind: livesync.KindNote, Reason: "unreadable document: " + err.Error()}, at: i}
			}
			continue
		}
		switch doc.Kind {
		case livesync.KindChunk:
			f.chunks.put(doc.ID, doc.Data)
			for id := range f.waiting[doc.ID] {
				retry[id] = true
			}
		case livesync.KindChunkTombstone:
			f.chunks.evict(doc.ID)
		case livesync.KindNote, livesync.KindTombstone:
			ops[doc.ID] = op{doc: doc, at: i}
		case livesync.KindSkip:
			if doc.Version > livesync.FormatVersion && !f.warnedVersion {
				f.warnedVersion = true
				f.couch.warnNewerFormat(doc.Version)
			}
		}
	}
	ordered := make([]op, 0, len(ops))
	for _, o := range ops {
		ordered = append(ordered, o)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].at < ordered[j].at })
	docs := make([]livesync.Doc, len(ordered))
	for i, o := range ordered {
		docs[i] = o.doc
	}
	ids := make([]string, 0, len(retry))
	for id := range retry {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if p, ok := f.parked[id]; ok {
			if _, again := ops[id]; !again {
				docs = append(docs, p.doc)
			}
		}
	}
	return f.commit(ctx, docs, batch[len(batch)-1].seq, len(batch))
}

// retryParked reads the parked notes that are due again (all of them when
// all is set), fetching each note's current revision by key.
func (f *Follower) retryParked(ctx context.Context, all bool) error {
	now := time.Now()
	var ids []string
	for id, p := range f.parked {
		if all || (!p.next.IsZero() && !now.Before(p.next)) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	sort.Strings(ids)
	raws, err := f.couch.fetch(ctx, ids)
	if err != nil {
		return err
	}
	var docs []livesync.Doc
	for _, id := range ids {
		raw, ok := raws[id]
		if !ok {
			docs = append(docs, livesync.Doc{ID: id, Kind: livesync.KindTombstone})
			continue
		}
		doc, err := f.couch.dec.Decode(raw)
		if err != nil {
			if fatalDecode(err) {
				return fatal(f.couch.decodeError(err))
			}
			doc = livesync.Doc{ID: id, Kind: livesync.KindTombstone}
		}
		if doc.Kind != livesync.KindNote {
			doc.Kind = livesync.KindTombstone
		}
		docs = append(docs, doc)
	}
	return f.commit(ctx, docs, f.since, 0)
}

// commit turns the notes and tombstones of a batch into one Apply with the
// checkpoint, after recording the notes that must wait in note_status. The
// follower's maps change only once the transaction is committed.
func (f *Follower) commit(ctx context.Context, docs []livesync.Doc, checkpoint string, rows int) error {
	p := &batchPlan{f: f, owner: map[string]string{}, idPath: map[string]string{}, upserts: map[string]index.NoteInput{},
		deletes: map[string]string{}, park: map[string]*parkedNote{}, unpark: map[string]bool{}, skipped: map[string]bool{}}
	var reads []livesync.Doc
	for _, d := range docs {
		switch {
		case d.Kind == livesync.KindTombstone:
			p.remove(d.ID, p.pathOf(d.ID))
		case d.Note == nil:
			p.remove(d.ID, p.pathOf(d.ID))
			p.skip(d.ID, d.ID, d.Rev, d.Reason)
		case d.Note.Deleted:
			p.remove(d.ID, d.Note.Path)
		default:
			if why := f.couch.skipReason(d.Note); why != "" {
				p.remove(d.ID, p.pathOf(d.ID))
				p.skip(d.ID, d.Note.Path, d.Rev, why)
				continue
			}
			reads = append(reads, d)
		}
	}
	notes := make([]*livesync.Note, len(reads))
	for i, d := range reads {
		notes[i] = d.Note
	}
	texts, errs, err := f.couch.readNotes(ctx, notes, f.chunks)
	if err != nil {
		return err
	}
	now := time.Now()
	for i, d := range reads {
		switch {
		case errs[i] == nil:
			p.upsert(d, texts[i])
		case waitable(errs[i]):
			p.parkNote(d, errs[i], now)
		default:
			f.log.Warn("note unreadable: not indexed", keyPath, d.Note.Path, keyRev, d.Rev, keyErr, errs[i])
			p.skip(d.ID, d.Note.Path, d.Rev, "unreadable: "+errs[i].Error())
		}
	}
	if len(p.status)+len(p.clear) > 0 {
		if err := f.store.SetNoteStatus(ctx, p.status, p.clear); err != nil {
			return fatal(err)
		}
	}
	batch := index.Batch{Source: f.couch.source, Checkpoint: checkpoint, Identity: f.identity}
	for _, n := range p.upserts {
		batch.Upserts = append(batch.Upserts, n)
	}
	sort.Slice(batch.Upserts, func(i, j int) bool { return batch.Upserts[i].Path < batch.Upserts[j].Path })
	for _, path := range p.deletes {
		batch.Deletes = append(batch.Deletes, path)
	}
	sort.Strings(batch.Deletes)
	if rows == 0 && len(batch.Upserts)+len(batch.Deletes) == 0 {
		p.apply()
		f.countParked()
		return nil
	}
	res, err := f.store.Apply(ctx, batch)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fatal(err)
	}
	f.since = checkpoint
	p.apply()
	f.countParked()
	f.update(func(s *FollowerStats) {
		s.Checkpoint = checkpoint
		s.Rows += rows
		s.Batches++
		s.Applied = s.Applied.Add(res)
		s.CachedChunks = f.chunks.len()
	})
	if res.Written() {
		f.log.Debug("applied changes", keyCount, rows, keyAdded, res.Added, keyChanged, res.Changed, keyRemoved, res.Deleted, keySeq, checkpoint)
	}
	if f.opts.OnBatch != nil {
		f.opts.OnBatch(BatchResult{ApplyResult: res, Rows: rows, Checkpoint: checkpoint, Parked: len(f.parked)})
	}
	return nil
}

// batchPlan is what one batch does to the index and to the follower's maps;
// the maps see it only after the transaction commits.
type batchPlan struct {
	f       *Follower
	owner   map[string]string // DocID → _id, "" for none: overrides f.owner
	idPath  map[string]string
	upserts map[string]index.NoteInput // by DocID
	deletes map[string]string          // DocID → path
	park    map[string]*parkedNote
	unpark  map[string]bool // ids whose status row goes
	skipped map[string]bool // ids skipped by this batch
	status  []index.NoteStatus
	clear   []string
}

func (p *batchPlan) ownerOf(key string) string {
	if id, ok := p.owner[key]; ok {
		return id
	}
	return p.f.owner[key]
}

func (p *batchPlan) pathOf(id string) string {
	if path, ok := p.idPath[id]; ok {
		return path
	}
	return p.f.idPath[id]
}

// remove deletes the note id had at path, unless another document's note is
// indexed there (two documents can claim one path; FORMAT.md §2).
func (p *batchPlan) remove(id, path string) {
	p.unparkID(id)
	if path == "" {
		return
	}
	p.idPath[id] = path
	key := index.DocID(path)
	if owner := p.ownerOf(key); owner != "" && owner != id {
		return
	}
	p.owner[key] = ""
	delete(p.upserts, key)
	p.deletes[key] = path
}

// upsert indexes a note read whole. Of two documents that claim one path,
// the one whose id LiveSync derives from the path keeps it; otherwise the
// later one wins.
func (p *batchPlan) upsert(d livesync.Doc, text string) {
	p.unparkID(d.ID)
	path := d.Note.Path
	key := index.DocID(path)
	if owner := p.ownerOf(key); owner != "" && owner != d.ID && p.f.couch.derivedID(path) == owner {
		p.f.log.Debug("a stale document claims an indexed path; ignored", keyID, d.ID, keyPath, path)
		return
	}
	if old := p.pathOf(d.ID); old != "" && index.DocID(old) != key {
		p.remove(d.ID, old)
	}
	p.idPath[d.ID] = path
	p.owner[key] = d.ID
	delete(p.deletes, key)
	p.upserts[key] = noteInput(d, text)
}

// parkNote keeps a note that could not be read whole until its chunks
// arrive; a newer revision replaces an older parked one and starts over.
func (p *batchPlan) parkNote(d livesync.Doc, err error, now time.Time) {
	prev := p.f.parked[d.ID]
	pn := &parkedNote{doc: d, reason: reason(err), state: index.StatusPending, since: now, delay: p.f.opts.ParkRetry}
	var missing *livesync.MissingChunksError
	if errors.As(err, &missing) {
		pn.missing = missing.IDs
	}
	if prev != nil && prev.doc.Rev == d.Rev {
		pn.since, pn.state, pn.delay = prev.since, prev.state, prev.delay
	}
	deadline := pn.since.Add(p.f.opts.ParkTimeout)
	if pn.state == index.StatusPending && !now.Before(deadline) {
		pn.state = index.StatusIncomplete
		p.f.log.Warn("note incomplete: its chunks did not arrive in time; not indexed", keyPath, d.Note.Path, keyID, d.ID, keyRev, d.Rev,
			keyReason, pn.reason, keyElapsed, now.Sub(pn.since).Round(time.Second))
	}
	if pn.state == index.StatusPending {
		pn.next = now.Add(pn.delay)
		if pn.next.After(deadline) {
			pn.next = deadline
		}
		pn.delay *= 2
	}
	delete(p.unpark, d.ID)
	p.park[d.ID] = pn
	p.idPath[d.ID] = d.Note.Path
	if prev == nil || prev.doc.Rev != d.Rev || prev.state != pn.state || prev.reason != pn.reason {
		p.status = append(p.status, index.NoteStatus{SourceID: d.ID, Path: d.Note.Path, Rev: d.Rev, State: pn.state, Reason: pn.reason, Since: pn.since})
	}
}

// unparkID settles id: it is neither parked nor skipped any more, and any
// status row it had goes.
func (p *batchPlan) unparkID(id string) {
	delete(p.park, id)
	delete(p.skipped, id)
	if _, parked := p.f.parked[id]; (parked || p.f.skipped[id]) && !p.unpark[id] {
		p.unpark[id] = true
		p.clear = append(p.clear, id)
	}
}

// skip records that id (at path, revision rev) is not indexed, and why.
func (p *batchPlan) skip(id, path, rev, reason string) {
	p.unparkID(id)
	delete(p.unpark, id)
	p.skipped[id] = true
	p.status = append(p.status, index.NoteStatus{SourceID: id, Path: path, Rev: rev, State: index.StatusSkipped, Reason: reason})
}

// apply moves the committed plan into the follower's maps.
func (p *batchPlan) apply() {
	f := p.f
	for key, id := range p.owner {
		if id == "" {
			delete(f.owner, key)
		} else {
			f.owner[key] = id
		}
	}
	for id, path := range p.idPath {
		f.idPath[id] = path
	}
	for id := range p.unpark {
		f.unparkNote(id)
		delete(f.skipped, id)
	}
	for id := range p.skipped {
		f.unparkNote(id)
		f.skipped[id] = true
	}
	for id, pn := range p.park {
		f.unparkNote(id)
		f.parked[id] = pn
		for _, c := range pn.missing {
			if f.waiting[c] == nil {
				f.waiting[c] = map[string]bool{}
			}
			f.waiting[c][id] = true
		}
	}
}

// countParked publishes the parked notes in the stats.
func (f *Follower) countParked() {
	incomplete := 0
	for _, pn := range f.parked {
		if pn.state == index.StatusIncomplete {
			incomplete++
		}
	}
	f.update(func(s *FollowerStats) { s.Parked, s.Incomplete = len(f.parked), incomplete })
}

func (f *Follower) unparkNote(id string) {
	pn, ok := f.parked[id]
	if !ok {
		return
	}
	delete(f.parked, id)
	for _, c := range pn.missing {
		delete(f.waiting[c], id)
		if len(f.waiting[c]) == 0 {
			delete(f.waiting, c)
		}
	}
}
