package routine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t) }

func TestCloseCancelsAndWaits(t *testing.T) {
	var r Routine
	stopped := false
	if err := r.Start(context.Background(), func(ctx context.Context) error {
		<-ctx.Done()
		stopped = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), func(context.Context) error { return nil }); !errors.Is(err, ErrStarted) {
		t.Fatalf("second Start: %v", err)
	}
	if err := r.Close(context.Background()); err != nil || !stopped {
		t.Fatalf("Close = %v, stopped %v", err, stopped)
	}
	select {
	case <-r.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
}

func TestErrorOfARoutineThatStopsByItself(t *testing.T) {
	var r Routine
	boom := errors.New("boom")
	if err := r.Start(context.Background(), func(context.Context) error { return boom }); err != nil {
		t.Fatal(err)
	}
	<-r.Done()
	if !errors.Is(r.Err(), boom) || !errors.Is(r.Close(context.Background()), boom) {
		t.Fatalf("Err = %v", r.Err())
	}
}

func TestCloseGivesUpWithItsContext(t *testing.T) {
	var r Routine
	release := make(chan struct{})
	defer close(release)
	if err := r.Start(context.Background(), func(context.Context) error { <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := r.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close of a routine that ignores its context = %v", err)
	}
	var never Routine
	if err := never.Close(context.Background()); err != nil || never.Done() != nil {
		t.Fatal("a routine never started")
	}
}
