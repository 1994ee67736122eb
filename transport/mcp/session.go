package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/vaultask/vaultask/transport/allowweb"
	"github.com/vaultask/vaultask/vault"
)

// An MCP session's scope lives in its id, signed, so that it holds for the
// session's whole life without a table. What mcp-go keeps of a session is
// only a cache (sessionCache): a session it no longer holds, after the
// cache dropped it or after a restart, works as before, one request at a
// time. (A client of the official TypeScript SDK does not initialize again
// after a 404 for its session; Claude Code 2.1 speaks protocol version
// 2026-07-28 first, which has no sessions, and otherwise does initialize
// again.)
//
// A session its client ended (DELETE) is over, as the transport spec
// says: its id is answered 404 from then on. The ids ended last are
// remembered, maxEndedSessions of them, until the process stops; an
// older one is served again like any session the server forgot.
//
// An id is "v1.<scope>.<nonce>.<mac>": the scope "open" or "all", the
// nonce 16 random bytes, the mac the first 16 bytes of an HMAC-SHA256 of
// what precedes it, both in unpadded base64url (which has no '.'). An id
// that does not verify (made up, from before this scheme, or signed with a
// key this server no longer has) is a session of open notes only: it keeps
// working, and never sees more than a caller of open notes only may.

const (
	sessionIDVersion = "v1"
	sessionNonceLen  = 16
	sessionMACLen    = 16
	// SessionKeyLen is the length of Options.SessionKey.
	SessionKeyLen = 32
	// sessionHeader is the streamable HTTP transport's session header.
	sessionHeader = "Mcp-Session-Id"
	// maxEndedSessions bounds the ids of sessions their clients ended that
	// are remembered (~100 bytes each).
	maxEndedSessions = 10000
)

// sessionSigner mints and verifies session ids.
type sessionSigner struct{ key []byte }

// newSessionSigner signs with key, or with a random key when it is empty:
// sessions then end with the process, as open-only ones.
func newSessionSigner(key []byte) (sessionSigner, error) {
	switch len(key) {
	case 0:
		key = make([]byte, SessionKeyLen)
		_, _ = rand.Read(key) // crypto/rand.Read never fails
	case SessionKeyLen:
	default:
		return sessionSigner{}, fmt.Errorf("mcp: the session key is %d bytes, want %d", len(key), SessionKeyLen)
	}
	return sessionSigner{key: key}, nil
}

// mint is a new session id of the scope.
func (sg sessionSigner) mint(scope vault.Scope) string {
	nonce := make([]byte, sessionNonceLen)
	_, _ = rand.Read(nonce)
	body := sessionIDVersion + "." + scope.String() + "." + base64.RawURLEncoding.EncodeToString(nonce)
	return body + "." + base64.RawURLEncoding.EncodeToString(sg.mac(body))
}

func (sg sessionSigner) mac(body string) []byte {
	m := hmac.New(sha256.New, sg.key)
	m.Write([]byte("vaultask mcp session\x00" + body))
	return m.Sum(nil)[:sessionMACLen]
}

// scope is the scope id was minted for. ok is false, and the scope
// ScopeOpen, when this key did not sign id.
func (sg sessionSigner) scope(id string) (scope vault.Scope, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 4 || parts[0] != sessionIDVersion {
		return vault.ScopeOpen, false
	}
	nonce, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(nonce) != sessionNonceLen {
		return vault.ScopeOpen, false
	}
	mac, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil || !hmac.Equal(mac, sg.mac(strings.Join(parts[:3], "."))) {
		return vault.ScopeOpen, false
	}
	switch parts[1] {
	case vault.ScopeAll.String():
		return vault.ScopeAll, true
	case vault.ScopeOpen.String():
		return vault.ScopeOpen, true
	}
	return vault.ScopeOpen, false
}

// sessionScopeKey carries, in an MCP request's context, the scope its
// session and its URL leave it (sessions.requestScope).
type sessionScopeKey struct{}

// sessionScope is the scope an MCP request's session leaves it: every tool
// call and resource of it sees no more, whatever a call asks; resources/list
// has no arguments, so it is the only scope a listing can have. A context
// without one is ScopeOpen.
func sessionScope(ctx context.Context) vault.Scope {
	scope, ok := ctx.Value(sessionScopeKey{}).(vault.Scope)
	if !ok {
		return vault.ScopeOpen
	}
	return scope
}

// sessions are how /mcp knows its sessions: the signer of their ids,
// the bounded cache of what mcp-go keeps of them, and the ids their
// clients ended.
type sessions struct {
	signer sessionSigner
	cache  *sessionCache
	ended  *endedSessions
	log    *slog.Logger
	// lastWarned is when, in Unix seconds, a session id that does not
	// verify was last logged: at most once a minute.
	lastWarned atomic.Int64
}

// requestScope is the scope of an MCP request: open notes only when its
// URL says allow_web=true or its session id does not say "all" under this
// server's key. A request without a session id (an initialize, a client of
// the sessionless protocol) has its URL's scope, which its new session
// keeps.
func (ms *sessions) requestScope(r *http.Request) (vault.Scope, error) {
	allowWeb, err := allowweb.Param(r)
	if err != nil {
		return vault.ScopeOpen, err
	}
	scope := vault.ScopeFor(allowWeb)
	id := r.Header.Get(sessionHeader)
	if id == "" {
		return scope, nil
	}
	idScope, ok := ms.signer.scope(id)
	if !ok {
		ms.warnUnsigned()
	}
	if idScope.OpenOnly() {
		return vault.ScopeOpen, nil
	}
	return scope, nil
}

// endedSessions are the ids of the sessions their clients ended, the
// latest max of them.
type endedSessions struct {
	max int

	mu    sync.Mutex
	ids   map[string]struct{}
	order []string // a ring of the ids in ids, the oldest at next once full
	next  int
}

func newEndedSessions(max int) *endedSessions {
	return &endedSessions{max: max, ids: map[string]struct{}{}}
}

// add remembers id, forgetting the oldest beyond max.
func (e *endedSessions) add(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.ids[id]; ok {
		return
	}
	e.ids[id] = struct{}{}
	if len(e.order) < e.max {
		e.order = append(e.order, id)
		return
	}
	delete(e.ids, e.order[e.next])
	e.order[e.next] = id
	e.next = (e.next + 1) % e.max
}

// has reports whether id is of a session its client ended.
func (e *endedSessions) has(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.ids[id]
	return ok
}

// warnUnsigned logs, at most once a minute, that a session id did not
// verify: a client of a session from before the key (or from before
// vaultask signed its sessions) sees open notes only until it connects
// again.
func (ms *sessions) warnUnsigned() {
	now := time.Now().Unix()
	last := ms.lastWarned.Load()
	if now-last < 60 || !ms.lastWarned.CompareAndSwap(last, now) {
		return
	}
	ms.log.Warn("an MCP request came with a session id this server did not sign (a session opened before its session key was made anew, or before vaultask signed its sessions, or a made-up id): it is served as a session of open notes only; reconnect the client for a session of the whole vault")
}

// sessionIDs is what mcp-go asks for session ids: a new one of the
// request's scope for an initialize. It accepts every id: which ones verify,
// and what they may see, requestScope decided before mcp-go got the
// request; a 404 would strand a client that does not initialize again.
type sessionIDs struct {
	signer sessionSigner
	scope  vault.Scope
}

func (m sessionIDs) Generate() string               { return m.signer.mint(m.scope) }
func (m sessionIDs) Validate(string) (bool, error)  { return false, nil }
func (m sessionIDs) Terminate(string) (bool, error) { return false, nil }

// sessionIDResolver gives mcp-go the sessionIDs of each request's scope.
type sessionIDResolver struct{ signer sessionSigner }

// ResolveSessionIdManager is the sessionIDs of r's scope, the one
// requestScope put in its context; without a request (mcp-go's own
// housekeeping) open notes only.
//
//lint:ignore ST1003 the name is mcp-go's interface's.
func (res sessionIDResolver) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	scope := vault.ScopeOpen
	if r != nil {
		scope = sessionScope(r.Context())
	}
	return sessionIDs{signer: res.signer, scope: scope}
}

var _ server.SessionIdManagerResolver = sessionIDResolver{}
