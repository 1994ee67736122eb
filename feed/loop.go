package feed

import (
	"context"
	"errors"
	"fmt"
)

// loop owns a follower's goroutine: start runs one function in it until
// that returns or Close cancels it. Followers embed it for Done and Close.
type loop struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// spawn runs fn in the loop's goroutine with a context Close cancels.
func (l *loop) spawn(ctx context.Context, fn func(context.Context) error) error {
	if l.done != nil {
		return errors.New("follower already open")
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		l.err = fn(ctx)
	}()
	return nil
}

// Done is closed when the follower has stopped.
func (l *loop) Done() <-chan struct{} { return l.done }

// Close stops the follower and waits for it, at most until ctx is done. It
// returns the error that stopped it, nil for a clean stop.
func (l *loop) Close(ctx context.Context) error {
	if l.done == nil {
		return nil
	}
	l.cancel()
	select {
	case <-l.done:
		return l.err
	case <-ctx.Done():
		return fmt.Errorf("close follower: %w", ctx.Err())
	}
}
