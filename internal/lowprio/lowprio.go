package lowprio

import (
	"runtime"
	"sync"
)

// Pool is n goroutines on threads of the lowest priority, taking work from
// Run until Close.
type Pool struct {
	n     int
	tasks chan func()
	wg    sync.WaitGroup
	once  sync.Once
}

// New starts a pool of n goroutines (at least one), each on a thread of
// its own whose priority it lowers first.
func New(n int) *Pool {
	p := &Pool{n: max(n, 1), tasks: make(chan func())}
	for range p.n {
		p.wg.Go(p.work)
	}
	return p
}

func (p *Pool) work() {
	// The thread stays this goroutine's until it ends, and then ends with
	// it: a thread of lowered priority never goes back to the runtime.
	runtime.LockOSThread()
	// Where a thread's priority cannot be lowered the work runs at the
	// process's: slower for the rest, never lost.
	_ = lowerPriority()
	for f := range p.tasks {
		f()
	}
}

// Size is the number of goroutines: how many of Run's functions run at
// once.
func (p *Pool) Size() int { return p.n }

// Run runs each of fns on the pool's goroutines and waits for them all.
func (p *Pool) Run(fns ...func()) {
	var wg sync.WaitGroup
	wg.Add(len(fns))
	for _, f := range fns {
		p.tasks <- func() {
			defer wg.Done()
			f()
		}
	}
	wg.Wait()
}

// Close stops the goroutines and waits for them; Run must not be called
// after.
func (p *Pool) Close() {
	p.once.Do(func() { close(p.tasks) })
	p.wg.Wait()
}
