package mcp

import (
	"container/list"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// sessionCache bounds what mcp-go keeps of MCP sessions. mcp-go holds every
// session an initialize registered (~11 KB each: channels for messages to
// the client) until the client sends DELETE, which clients that just go
// away never do: 20,000 initialize calls once held 230 MB for good. The
// cache follows mcp-go's registrations and drops the least recently used
// session beyond max, and any unused for idle. A dropped session loses
// nothing vaultask uses: its scope is in its id, and mcp-go serves a
// session it does not hold one request at a time.
type sessionCache struct {
	max  int
	idle time.Duration
	// drop frees what mcp-go keeps of a session; called without mu.
	drop func(id string)
	log  *slog.Logger

	mu    sync.Mutex
	order *list.List // of *cachedSession, the most recently used first
	byID  map[string]*list.Element
	// sweep runs when the least recently used session turns idle.
	sweep *time.Timer
}

type cachedSession struct {
	id   string
	used time.Time
}

func newSessionCache(max int, idle time.Duration, drop func(id string), log *slog.Logger) *sessionCache {
	return &sessionCache{max: max, idle: idle, drop: drop, log: log, order: list.New(), byID: map[string]*list.Element{}}
}

// add records a session mcp-go registered, dropping those it pushes out.
func (c *sessionCache) add(id string) {
	c.mu.Lock()
	if e, ok := c.byID[id]; ok {
		c.order.Remove(e)
	}
	c.byID[id] = c.order.PushFront(&cachedSession{id: id, used: time.Now()})
	var out []string
	for c.order.Len() > c.max {
		out = append(out, c.removeLocked(c.order.Back()))
	}
	c.armLocked()
	held := c.order.Len()
	c.mu.Unlock()
	c.log.Debug("MCP session's state kept", keySession, id, keyHeld, held)
	c.dropAll(out, "the least recently used beyond mcp.max_sessions")
}

// touch marks a session used, if the cache holds it.
func (c *sessionCache) touch(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		e.Value.(*cachedSession).used = time.Now()
		c.order.MoveToFront(e)
	}
}

// remove forgets a session mcp-go let go of (a DELETE, the end of a GET
// stream, a drop).
func (c *sessionCache) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		c.removeLocked(e)
	}
}

// len is how many sessions the cache holds.
func (c *sessionCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// expire drops the sessions unused for idle, and waits for the next one.
func (c *sessionCache) expire() {
	c.mu.Lock()
	c.sweep = nil
	var out []string
	now := time.Now()
	for e := c.order.Back(); e != nil && now.Sub(e.Value.(*cachedSession).used) >= c.idle; e = c.order.Back() {
		out = append(out, c.removeLocked(e))
	}
	c.armLocked()
	c.mu.Unlock()
	c.dropAll(out, "unused for mcp.session_idle")
}

// armLocked sets the sweep for when the least recently used session turns
// idle, unless one is set or the cache is empty. c.mu is held.
func (c *sessionCache) armLocked() {
	oldest := c.order.Back()
	if c.sweep != nil || oldest == nil {
		return
	}
	c.sweep = time.AfterFunc(time.Until(oldest.Value.(*cachedSession).used.Add(c.idle)), c.expire)
}

func (c *sessionCache) removeLocked(e *list.Element) string {
	id := c.order.Remove(e).(*cachedSession).id
	delete(c.byID, id)
	return id
}

// dropAll drops the sessions the cache let go of, for the reason given.
func (c *sessionCache) dropAll(ids []string, reason string) {
	for _, id := range ids {
		c.log.Debug("MCP session's state dropped: the session goes on working", keySession, id, keyReason, reason)
		c.drop(id)
	}
}

// followRegistrations keeps c in step with the sessions mcp-go registers
// and lets go of.
func (c *sessionCache) followRegistrations(hooks *server.Hooks) {
	hooks.AddOnRegisterSession(func(_ context.Context, s server.ClientSession) { c.add(s.SessionID()) })
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) { c.remove(s.SessionID()) })
}
