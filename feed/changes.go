package feed

import (
	"context"
	"sync"
	"time"

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
	rows, errc, wait := f.startReading(conn, f.since)
	defer func() {
		cancel()
		wait()
		f.withStats(func(s *FollowerStats) { s.Connected = false })
	}()

	f.checkCaughtUp(false)
	markHealthy := func() {
		if !healthy {
			healthy = true
			f.recovered()
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

// startReading opens the _changes feed from since in a goroutine that sends
// its rows to rows, closes rows when the feed ends and then sends why to
// errc; wait waits for it. The request runs in that goroutine: a server may
// hold the response headers back until its first heartbeat or change, and
// the follower must keep serving its timers meanwhile.
func (f *Follower) startReading(ctx context.Context, since string) (rows <-chan feedRow, errc <-chan error, wait func()) {
	out := make(chan feedRow, f.opts.BatchRows)
	ec := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(out)
		ec <- f.couch.changes(ctx, since, func() { f.withStats(func(s *FollowerStats) { s.Connected = true }) }, out)
	})
	return out, ec, wg.Wait
}

// recovered marks a connection healthy: the checkpoint may have caught up,
// and a failure that was being reported is over.
func (f *Follower) recovered() {
	f.checkCaughtUp(true)
	if f.failure != "" {
		f.failure = ""
		f.log.Info("changes feed recovered", keySeq, f.since)
		f.withStats(func(s *FollowerStats) { s.Failing, s.LastError, s.LastErrorKind = false, "", "" })
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
