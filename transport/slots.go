package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// slotKind is who takes a slot: an answer (/v1/chat/completions, which
// /chat uses) or an agent's MCP tool call.
type slotKind int

const (
	kindAnswer slotKind = iota
	kindTool
)

// SlotOptions share the slots in which answers and MCP tool calls run.
// Their zero values keep nothing for either kind and refuse at once when
// every slot is taken.
type SlotOptions struct {
	// ForAnswers are slots that tool calls never take, and ForTools slots
	// that answers never take, so that agents looping searches cannot lock
	// chat out, nor a burst of answers the agents. Together at most
	// Options.MaxConcurrent.
	ForAnswers, ForTools int
	// Wait is how long a request waits for a slot before it is refused
	// (429, or a tool error); 0 refuses at once.
	Wait time.Duration
	// MaxWaiting bounds the requests of each kind waiting for a slot at
	// once; beyond it a request is refused at once.
	MaxWaiting int
}

// slotPool holds the slots. Each kind may hold every slot but those kept
// for the other; a request that finds none free waits in line, first come
// first served among those a freed slot may go to, for at most Wait.
type slotPool struct {
	opts  SlotOptions
	total int
	heap  *heapReturn

	mu      sync.Mutex
	held    [2]int
	waiting [2]int
	line    []*slotWaiter // oldest first
}

// slotWaiter is a request waiting for a slot; ready is closed once it has
// one.
type slotWaiter struct {
	kind  slotKind
	ready chan struct{}
}

func newSlotPool(total int, opts SlotOptions, heap *heapReturn) (*slotPool, error) {
	switch {
	case opts.ForAnswers < 0 || opts.ForTools < 0 || opts.MaxWaiting < 0 || opts.Wait < 0:
		return nil, fmt.Errorf("transport: slot reservations, the wait and the waiting bound must not be negative: %+v", opts)
	}
	return &slotPool{opts: fitReservations(opts, total), total: total, heap: heap}, nil
}

// fitReservations shrinks the slots kept for each kind until together they
// leave each kind at least one slot it may take: a small api.max_concurrent
// (1 on a weak NAS) keeps fewer or none, and answers and tool calls share
// what there is first come first served, instead of refusing to start.
func fitReservations(opts SlotOptions, total int) SlotOptions {
	for opts.ForAnswers+opts.ForTools > total || total-opts.ForTools < 1 || total-opts.ForAnswers < 1 {
		if opts.ForAnswers >= opts.ForTools {
			opts.ForAnswers--
		} else {
			opts.ForTools--
		}
	}
	return opts
}

// most is how many slots kind may hold at once: all but those kept for
// the other kind.
func (p *slotPool) most(kind slotKind) int {
	if kind == kindAnswer {
		return p.total - p.opts.ForTools
	}
	return p.total - p.opts.ForAnswers
}

// free reports whether kind may take a slot now. p.mu is held.
func (p *slotPool) free(kind slotKind) bool {
	return p.held[kindAnswer]+p.held[kindTool] < p.total && p.held[kind] < p.most(kind)
}

// take gives kind a slot. p.mu is held.
func (p *slotPool) take(kind slotKind) {
	p.held[kind]++
	p.heap.busy()
}

// busyError is a request refused for want of a slot; its message says why
// and what the settings are.
type busyError struct{ msg string }

func (e *busyError) Error() string { return e.msg }

// acquire takes a slot for kind, waiting in line for one up to the pool's
// Wait. It fails with a *busyError when none came free, or ctx's error
// when ctx ended first. When the last slot taken is given back, the heap
// the burst grew goes back to the operating system (heapReturn).
func (p *slotPool) acquire(ctx context.Context, kind slotKind) (release func(), err error) {
	p.mu.Lock()
	if p.free(kind) {
		p.take(kind)
		p.mu.Unlock()
		return p.releaser(kind), nil
	}
	if p.opts.Wait <= 0 || p.waiting[kind] >= p.opts.MaxWaiting {
		defer p.mu.Unlock()
		return nil, p.refusal(kind, 0)
	}
	w := &slotWaiter{kind: kind, ready: make(chan struct{})}
	p.line = append(p.line, w)
	p.waiting[kind]++
	p.mu.Unlock()

	timer := time.NewTimer(p.opts.Wait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return p.releaser(kind), nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return p.leaveLine(ctx, w)
}

// leaveLine takes w out of the line after its wait ended without a slot,
// unless a slot came to it meanwhile: then it keeps that. Its error is
// ctx's when ctx ended, else a *busyError.
func (p *slotPool) leaveLine(ctx context.Context, w *slotWaiter) (func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-w.ready:
		return p.releaser(w.kind), nil
	default:
	}
	p.line = slices.DeleteFunc(p.line, func(o *slotWaiter) bool { return o == w })
	p.waiting[w.kind]--
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, p.refusal(w.kind, p.opts.Wait)
}

// releaser is the function that gives kind's slot back, once, and hands
// it, or the room it leaves, to the requests in line that may take it.
func (p *slotPool) releaser(kind slotKind) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.held[kind]--
			p.grant()
			if p.held[kindAnswer]+p.held[kindTool] == 0 {
				p.heap.idle()
			}
		})
	}
}

// grant gives slots to the requests in line that may take one now, oldest
// first: a waiting answer that its kind's limit holds back does not hold up
// a tool call behind it that may run. p.mu is held.
func (p *slotPool) grant() {
	p.line = slices.DeleteFunc(p.line, func(w *slotWaiter) bool {
		if !p.free(w.kind) {
			return false
		}
		p.take(w.kind)
		p.waiting[w.kind]--
		close(w.ready)
		return true
	})
}

// refusal is the error of a request of kind refused after waiting waited
// (0: at once). p.mu is held.
func (p *slotPool) refusal(kind slotKind, waited time.Duration) error {
	what, whose, kept, setting := "answers", "MCP tool calls", p.opts.ForTools, "api.reserved_for_tools"
	if kind == kindTool {
		what, whose, kept, setting = "MCP tool calls", "answers", p.opts.ForAnswers, "api.reserved_for_answers"
	}
	why := fmt.Sprintf("every slot %s may use is taken", what)
	switch {
	case waited > 0:
		why = fmt.Sprintf("no slot for %s came free within %v (api.slot_wait)", what, waited)
	case p.opts.Wait > 0:
		why += fmt.Sprintf(" and %d more already wait for one (api.max_waiting)", p.waiting[kind])
	}
	return &busyError{fmt.Sprintf("%s: %d answers and %d MCP tool calls are running; %s may use %d of the %d slots (api.max_concurrent), %d being kept for %s (%s): retry shortly",
		why, p.held[kindAnswer], p.held[kindTool], what, p.most(kind), p.total, kept, whose, setting)}
}

// answerSlot takes a slot for an answer, waiting for one as the pool
// says; without one it answers the request (429 with Retry-After, or as a
// request that ended) and ok is false.
func (s *Server) answerSlot(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	release, err := s.slots.acquire(r.Context(), kindAnswer)
	var busy *busyError
	switch {
	case errors.As(err, &busy):
		w.Header().Set("Retry-After", retryAfter)
		writeError(w, http.StatusTooManyRequests, apiError{Type: rateLimited, Code: "busy", Message: busy.Error()})
		return nil, false
	case err != nil:
		s.answerFailed(w, r, err)
		return nil, false
	}
	return release, true
}
