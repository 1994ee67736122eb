package lowprio

import (
	"sync/atomic"
	"testing"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t) }

// runAll runs n functions on p, each calling each, and returns how many
// ran and how many ran at most at once.
func runAll(p *Pool, n int, each func()) (ran, most int64) {
	var done, running, peak atomic.Int64
	fns := make([]func(), n)
	for i := range fns {
		fns[i] = func() {
			now := running.Add(1)
			for {
				m := peak.Load()
				if now <= m || peak.CompareAndSwap(m, now) {
					break
				}
			}
			each()
			done.Add(1)
			running.Add(-1)
		}
	}
	p.Run(fns...)
	return done.Load(), peak.Load()
}

// TestPoolRunsEveryFunction: Run runs every function it is given and
// returns after the last, at most Size at once.
func TestPoolRunsEveryFunction(t *testing.T) {
	p := New(3)
	defer p.Close()
	if ran, most := runAll(p, 40, func() {}); ran != 40 || most > 3 {
		t.Fatalf("ran %d of 40, at most %d at once (pool of 3)", ran, most)
	}
	if New(0).Size() != 1 {
		t.Error("a pool of no goroutines")
	}
}
