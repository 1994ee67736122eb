package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Clock is the time a loop reads and waits on.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
	// Sleep waits d, or until ctx is done, and returns ctx's error then:
	// a retry loop's wait after a failure.
	Sleep(ctx context.Context, d time.Duration) error
}

// Timer is a one-shot timer of a Clock, as time.Timer.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// System is the wall clock.
var System Clock = system{}

type system struct{}

func (system) Now() time.Time                 { return time.Now() }
func (system) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

func (system) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type sysTimer struct{ t *time.Timer }

func (s sysTimer) C() <-chan time.Time        { return s.t.C }
func (s sysTimer) Stop() bool                 { return s.t.Stop() }
func (s sysTimer) Reset(d time.Duration) bool { return s.t.Reset(d) }

// Backoff is capped exponential backoff with "equal jitter": the n-th wait
// is drawn from [d/2, d) with d = Min·2ⁿ capped at Max, so that clients
// retrying together spread out while each still waits at least half the
// nominal delay. The zero value of Jitter draws from math/rand.
type Backoff struct {
	Min, Max time.Duration
	// Jitter returns a number in [0, 1); tests fix it.
	Jitter func() float64
	n      int
}

// Next is the wait before the next attempt; each call doubles the nominal
// delay until Max.
func (b *Backoff) Next() time.Duration {
	d := b.Max
	if b.n < 32 {
		if x := b.Min << b.n; x > 0 && x < b.Max {
			d = x
			b.n++
		}
	}
	jitter := b.Jitter
	if jitter == nil {
		jitter = rand.Float64
	}
	half := d / 2
	return half + time.Duration(jitter()*float64(d-half))
}

// Reset starts the delays over from Min, after a success.
func (b *Backoff) Reset() { b.n = 0 }
