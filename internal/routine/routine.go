package routine

import (
	"context"
	"errors"
	"fmt"
)

// Routine is the goroutine of one component; embed it for Done and Close.
// The zero value is ready to Start once.
type Routine struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// ErrStarted is returned by a second Start.
var ErrStarted = errors.New("already started")

// Start runs fn in the routine's goroutine, with a context that Close
// cancels.
func (r *Routine) Start(ctx context.Context, fn func(context.Context) error) error {
	if r.done != nil {
		return ErrStarted
	}
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		r.err = fn(ctx)
	}()
	return nil
}

// Done is closed when the routine has stopped, by itself or by Close; nil
// before Start.
func (r *Routine) Done() <-chan struct{} { return r.done }

// Err is the error that stopped the routine; call it only after Done.
func (r *Routine) Err() error { return r.err }

// Close stops the routine and waits for it, at most until ctx is done. It
// returns the error that stopped it, nil for a clean stop. Closing a
// routine never started does nothing.
func (r *Routine) Close(ctx context.Context) error {
	if r.done == nil {
		return nil
	}
	r.cancel()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return fmt.Errorf("close: %w", ctx.Err())
	}
}
