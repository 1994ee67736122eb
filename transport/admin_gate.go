package transport

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Lockout: this many wrong admin keys from one client address lock it out
// for adminCooldown, the right key included.
const (
	maxAdminFailures = 10
	adminCooldown    = 10 * time.Minute
	// maxLockoutEntries bounds the addresses remembered; past it the ones
	// neither locked nor recently wrong are forgotten first.
	maxLockoutEntries = 4096
)

// adminGate checks the admin key, counting wrong ones per client address.
type adminGate struct {
	want [sha256.Size]byte
	set  bool
	now  func() time.Time

	mu      sync.Mutex
	clients map[netip.Prefix]*strikes
}

type strikes struct {
	n     int
	last  time.Time
	until time.Time // locked out until then
}

func newAdminGate(key string, now func() time.Time) *adminGate {
	if now == nil {
		now = time.Now
	}
	return &adminGate{want: sha256.Sum256([]byte(key)), set: key != "", now: now, clients: map[netip.Prefix]*strikes{}}
}

// keyEqual compares a key with the admin key in time independent of either
// one's content and length: both are hashed first, and the hashes compared
// in constant time.
func (g *adminGate) keyEqual(got string) bool {
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], g.want[:]) == 1
}

// clientOf is the address lockouts count by: the connection's IP (a
// forwarded header is anyone's to write), an IPv6 client by its /64, which
// one machine usually holds whole.
func clientOf(r *http.Request) netip.Prefix {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// admit reports whether the request's key is the admin key, and otherwise
// answers it: 503 without an admin key, 429 while its address is locked
// out, 401 for a missing or wrong key.
func (g *adminGate) admit(w http.ResponseWriter, r *http.Request) bool {
	if !g.set {
		writeError(w, http.StatusServiceUnavailable, apiError{Type: invalidRequest, Code: "admin_disabled",
			Message: "no admin key is configured: set VAULTASK_API__ADMIN_KEY and restart to use /admin"})
		return false
	}
	client := clientOf(r)
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.clients[client]; s != nil && now.Before(s.until) {
		wait := s.until.Sub(now)
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+1)))
		writeError(w, http.StatusTooManyRequests, apiError{Type: rateLimited, Code: "locked_out",
			Message: fmt.Sprintf("%d wrong admin keys from this address: try again in %s", maxAdminFailures, roundUp(wait))})
		return false
	}
	key := r.Header.Get("X-API-Key")
	switch {
	case key != "" && g.keyEqual(key):
		delete(g.clients, client)
		return true
	case key == "":
		writeError(w, http.StatusUnauthorized, apiError{Type: invalidRequest, Code: "missing_key",
			Message: "send the admin key (VAULTASK_API__ADMIN_KEY) as X-API-Key"})
		return false
	}
	left := g.strike(client, now)
	writeError(w, http.StatusUnauthorized, apiError{Type: invalidRequest, Code: "wrong_key",
		Message: fmt.Sprintf("wrong admin key (%d more tries before a %s lockout)", left, roundUp(adminCooldown))})
	return false
}

// strike counts a wrong key from client, locking it out at the
// maxAdminFailures-th within a cool-down of the last, and returns the tries
// left before the lockout. g.mu is held.
func (g *adminGate) strike(client netip.Prefix, now time.Time) (left int) {
	s := g.clients[client]
	if s == nil || now.Sub(s.last) > adminCooldown {
		g.forget(now)
		s = &strikes{}
		g.clients[client] = s
	}
	s.n++
	s.last = now
	left = maxAdminFailures - s.n
	if left <= 0 {
		s.n, s.until = 0, now.Add(adminCooldown)
	}
	return max(left, 0)
}

// forget makes room for a new address once the table is full: first the
// addresses whose strikes are old and that are not locked out, then any
// that are not locked out.
func (g *adminGate) forget(now time.Time) {
	if len(g.clients) < maxLockoutEntries {
		return
	}
	for c, s := range g.clients {
		if now.Sub(s.last) > adminCooldown && !now.Before(s.until) {
			delete(g.clients, c)
		}
	}
	for c, s := range g.clients {
		if len(g.clients) < maxLockoutEntries {
			return
		}
		if !now.Before(s.until) {
			delete(g.clients, c)
		}
	}
}

func roundUp(d time.Duration) string {
	if m := int((d + time.Minute - 1) / time.Minute); m > 1 {
		return strconv.Itoa(m) + " minutes"
	}
	return "a minute"
}

func (s *Server) adminAuthed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.admin.admit(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// statusAuthed admits the API key, or the admin key in X-API-Key: /admin
// shows the status too, and its key is the stronger one. A request with a
// bearer token, or any request while no admin key is set, goes by the API
// key alone, so a stray X-API-Key neither refuses a good bearer nor counts
// towards the admin lockout.
func (s *Server) statusAuthed(next http.Handler) http.Handler {
	api, admin := s.authed(next), s.adminAuthed(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-Key") != "" && r.Header.Get("Authorization") == "" && s.opts.Admin.Key != "" {
			admin.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
