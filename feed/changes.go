package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	kivik "github.com/go-kivik/kivik/v4"
	"github.com/vaultask/vaultask/internal/retry"
)

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
		f.withStats(func(s *FollowerStats) { s.Connected = true })
		errc <- readChanges(conn, ch, rows)
	}()
	defer func() {
		cancel()
		wg.Wait()
		f.withStats(func(s *FollowerStats) { s.Connected = false })
	}()

	f.checkCaughtUp(false)
	markHealthy := func() {
		if healthy {
			return
		}
		healthy = true
		f.checkCaughtUp(true)
		if f.failure != "" {
			f.failure = ""
			f.log.Info("changes feed recovered", keySeq, f.since)
			f.withStats(func(s *FollowerStats) { s.Failing, s.LastError, s.LastErrorKind = false, "", "" })
		}
	}
	stable := f.clock.NewTimer(f.opts.StableAfter)
	defer stable.Stop()
	check := f.clock.NewTimer(f.opts.CheckInterval)
	defer check.Stop()
	for {
		retryDue, stopRetry := f.timerAt(f.parking.nextDue())
		reconDue, stopRecon := f.timerAt(f.nextReconcile)
		var batch []feedRow
		closed := false
		select {
		case <-ctx.Done():
		case <-stable.C():
			markHealthy()
		case <-retryDue:
			err = f.retryParked(ctx, false)
		case <-reconDue:
			err = errReconcileDue
		case <-check.C():
			err = f.checkDatabase(ctx)
			check.Reset(f.opts.CheckInterval)
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
			if err = f.applyRows(ctx, batch); err == nil {
				f.checkCaughtUp(healthy)
			}
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
	window := f.clock.NewTimer(f.opts.BatchWindow)
	defer window.Stop()
	quiet := f.clock.NewTimer(f.opts.BatchQuiet)
	defer quiet.Stop()
	for len(batch) < f.opts.BatchRows && size < f.opts.BatchBytes {
		select {
		case <-ctx.Done():
			return batch, false
		case <-window.C():
			return batch, false
		case <-quiet.C():
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

// timerAt fires at t, on the follower's clock; never for a zero t. stop
// releases it.
func (f *Follower) timerAt(t time.Time) (<-chan time.Time, func()) {
	if t.IsZero() {
		return nil, func() {}
	}
	var tm retry.Timer = f.clock.NewTimer(t.Sub(f.clock.Now()))
	return tm.C(), func() { tm.Stop() }
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
				return fmt.Errorf("a change (sequence %s) came without its document: %w", change.Seq, err) // no id: it is a note's path, and the error reaches /readyz
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
