package retry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t) }

func TestBackoff(t *testing.T) {
	b := &Backoff{Min: time.Second, Max: 8 * time.Second, Jitter: func() float64 { return 0.999999 }}
	var got []time.Duration
	for range 6 {
		got = append(got, b.Next().Round(time.Millisecond))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("with full jitter (-want +got):\n%s", diff)
	}
	b.Reset()
	b.Jitter = func() float64 { return 0 }
	if d := b.Next(); d != 500*time.Millisecond {
		t.Errorf("after reset, no jitter: %v, want half the minimum", d)
	}
	b = &Backoff{Min: time.Millisecond, Max: time.Hour}
	for range 100 {
		if d := b.Next(); d < 0 || d > time.Hour {
			t.Fatalf("wait %v outside [0, Max]", d)
		}
	}
}

func TestSystemSleepStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := System.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
	if err := System.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	tm := System.NewTimer(time.Millisecond)
	<-tm.C()
	if tm.Stop() {
		t.Error("Stop reported a fired timer as active")
	}
}
