package transport

import (
	"context"
	"testing"
	"time"
)

// TestHeapReturnedAfterABurst: the heap goes back only when the last of
// several slots is given back, once, and a slot taken while the server
// waits to fall idle calls the return off.
func TestHeapReturnedAfterABurst(t *testing.T) {
	t.Parallel()
	freed := make(chan struct{}, 4)
	heap := newHeapReturn()
	heap.idleFor, heap.every = time.Millisecond, 0
	heap.free = func() { freed <- struct{}{} }
	slots, err := newSlotPool(3, SlotOptions{}, heap)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	var releases []func()
	for _, kind := range []slotKind{kindAnswer, kindTool, kindAnswer} {
		release, err := slots.acquire(ctx, kind)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	if _, err := slots.acquire(ctx, kindTool); err == nil {
		t.Fatal("a fourth slot was taken out of three")
	}
	releases[0]()
	releases[1]()
	heap.mu.Lock()
	waiting := heap.timer != nil
	heap.mu.Unlock()
	if waiting {
		t.Fatal("the heap is to be returned while an answer still runs")
	}
	releases[2]()
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("the heap was not returned after the burst")
	}

	heap.mu.Lock()
	heap.idleFor = time.Hour
	heap.mu.Unlock()
	release, _ := slots.acquire(ctx, kindTool)
	release()
	if _, err := slots.acquire(ctx, kindAnswer); err != nil {
		t.Fatal(err)
	}
	heap.mu.Lock()
	defer heap.mu.Unlock()
	if heap.timer != nil {
		t.Error("a new answer did not call off the return planned when the server fell idle")
	}
	if len(freed) != 0 {
		t.Errorf("the heap was returned %d more times", len(freed))
	}
}

// TestHeapReturnAtMostEveryInterval: a return waits for the server to be
// idle for idleFor, and no sooner than every after the last one.
func TestHeapReturnAtMostEveryInterval(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	h := newHeapReturn()
	h.now = func() time.Time { return now }
	for _, tc := range []struct {
		sinceLast time.Duration
		want      time.Duration
	}{
		{sinceLast: 24 * time.Hour, want: h.idleFor},
		{sinceLast: time.Minute, want: h.idleFor},
		{sinceLast: 10 * time.Second, want: 50 * time.Second},
		{sinceLast: 0, want: time.Minute},
	} {
		h.last = now.Add(-tc.sinceLast)
		if got := h.delay(); got != tc.want {
			t.Errorf("%v after the last return: wait %v, want %v", tc.sinceLast, got, tc.want)
		}
	}
}
