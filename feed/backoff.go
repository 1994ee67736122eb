package feed

import (
	"context"
	"time"
)

// backoff is capped exponential backoff with "equal jitter": the n-th wait is
// drawn from [d/2, d) with d = min·2ⁿ capped at max, so reconnecting clients
// spread out while each still waits at least half the nominal delay.
type backoff struct {
	min, max time.Duration
	// jitter returns a number in [0, 1).
	jitter func() float64
	n      int
}

func (b *backoff) next() time.Duration {
	d := b.max
	if b.n < 32 {
		if x := b.min << b.n; x > 0 && x < b.max {
			d = x
			b.n++
		}
	}
	half := d / 2
	return half + time.Duration(b.jitter()*float64(d-half))
}

func (b *backoff) reset() { b.n = 0 }

// sleep waits d or until ctx is done; it is the follower's default Sleep.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
