package transport

import (
	"runtime/debug"
	"sync"
	"time"
)

// heapReturn gives the heap back to the operating system once a burst of
// answers and searches is over. Go's scavenger returns freed pages slowly,
// so after a burst of long questions a NAS saw the daemon's RSS stay at its
// peak; one forced collection when the server falls idle brings it back to
// what the idle server needs. It runs at most once a minute and only after
// the last slot has been free for a while, so steady traffic never pays
// for it.
type heapReturn struct {
	mu    sync.Mutex
	timer *time.Timer
	last  time.Time
	// idleFor is how long every slot must be free first; every is the least
	// time between two returns.
	idleFor, every time.Duration
	free           func()
	now            func() time.Time
}

func newHeapReturn() *heapReturn {
	return &heapReturn{idleFor: 5 * time.Second, every: time.Minute, free: debug.FreeOSMemory, now: time.Now}
}

// busy is called when a slot is taken: the burst goes on.
func (h *heapReturn) busy() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
}

// idle is called when the last slot is given back. A slot taken between the
// two calls only makes the collection run beside one answer, which costs a
// collection and nothing else.
func (h *heapReturn) idle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer != nil {
		return
	}
	h.timer = time.AfterFunc(h.delay(), func() {
		h.mu.Lock()
		h.timer = nil
		h.last = h.now()
		h.mu.Unlock()
		h.free()
	})
}

// delay is how long idle waits: idleFor, or longer while the last return
// is less than every ago. h.mu is held.
func (h *heapReturn) delay() time.Duration {
	return max(h.idleFor, h.every-h.now().Sub(h.last))
}
