package feed

import (
	"time"

	"github.com/vaultask/vaultask/index"
)

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
	// LastError describes the current failure, in words a user acts on,
	// and is cleared when the feed recovers; LastErrorAt is when the last
	// failure happened, and stays.
	LastError   string
	LastErrorAt time.Time
	// LastErrorKind is the kind of the current failure, in a few words that
	// name no server, database or user ("unreachable", "unauthorized", "no
	// database", …), for whoever may not see LastError; cleared with it.
	LastErrorKind string
	// UpdateSeq is the database's sequence when it was last checked.
	UpdateSeq string
	// LastChangeAt is when a batch last changed a note of the index.
	LastChangeAt time.Time
	// Failing is set from a failure until the feed recovers.
	Failing bool
	// CaughtUp is set once the checkpoint reached the database's sequence
	// as read when a connection opened: everything written before the
	// follower started is indexed. It stays set.
	CaughtUp bool
	// Resumed is set when the index held a checkpoint of the database when
	// the follower opened: it held the whole vault as of that checkpoint,
	// whether or not CouchDB can be reached now.
	Resumed bool
	// Scanning is set while a full reconcile runs. While it lists the
	// database, ScanListed of its ScanDocuments documents (_all_docs'
	// total_rows, chunks included) are listed; then ScanDone of the
	// ScanTotal notes it listed are written, counted per transaction.
	Scanning                  bool
	ScanListed, ScanDocuments int
	ScanDone, ScanTotal       int
	// LastReconcile is what the last full reconcile did, zero before the
	// first; NextReconcile is when the next is due (zero: never).
	LastReconcile ReconcileSummary
	NextReconcile time.Time
}

// ReconcileSummary is what one full reconcile found and did.
type ReconcileSummary struct {
	At                                   time.Time
	Took                                 time.Duration
	Notes, Added, Changed, Removed, Kept int
	Incomplete, Skipped                  int
}

// Stats returns a snapshot of the follower's counters.
func (f *Follower) Stats() FollowerStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

func (f *Follower) withStats(fn func(*FollowerStats)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.stats)
}

// checkCaughtUp marks the follower caught up once its checkpoint reached the
// sequence the database had when the connection opened. A sequence that is
// not a number (another server's opaque kind) counts once the connection is
// healthy.
func (f *Follower) checkCaughtUp(healthy bool) {
	at, okAt := seqNumber(f.since)
	want, okWant := seqNumber(f.target)
	if okAt && okWant && at >= want || (!okAt || !okWant) && healthy {
		f.withStats(func(s *FollowerStats) { s.CaughtUp = true })
	}
}

// countParked publishes the parked notes in the stats.
func (f *Follower) countParked() {
	parked, incomplete := f.parking.counts()
	f.withStats(func(s *FollowerStats) { s.Parked, s.Incomplete = parked, incomplete })
}
