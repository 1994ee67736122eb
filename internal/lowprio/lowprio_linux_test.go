package lowprio

import (
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// threadNice is the calling thread's nice value: getpriority returns
// 20 - nice for PRIO_PROCESS on Linux.
func threadNice() (int, error) {
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	return 20 - prio, err
}

// TestPoolThreadsHaveTheLowestPriority: every function runs on a thread of
// nice 19, and the caller's thread keeps its own.
func TestPoolThreadsHaveTheLowestPriority(t *testing.T) {
	p := New(2)
	defer p.Close()
	var wrong atomic.Int64
	runAll(p, 10, func() {
		if nice, err := threadNice(); err != nil || nice != lowestNice {
			wrong.Add(1)
		}
	})
	if wrong.Load() != 0 {
		t.Errorf("%d functions ran on a thread whose priority was not lowered", wrong.Load())
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if nice, err := threadNice(); err != nil || nice == lowestNice {
		t.Errorf("the caller's thread has nice %d (%v), lowered with the pool's", nice, err)
	}
}
