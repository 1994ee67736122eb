package transport

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/transport/mcp"
)

// Answerer is the answering pipeline; *rag.Pipeline implements it.
type Answerer interface {
	// Admit reports, as a *rag.LimitError, a question over the pipeline's
	// size limits, which Retrieve and Ask would refuse.
	Admit(q rag.Question) error
	Retrieve(ctx context.Context, q rag.Question) (*rag.Retrieval, error)
	Ask(ctx context.Context, q rag.Question, onDelta func(string) error) (*rag.Answer, error)
}

// Options configure a Server. Answerer, Notes, Status and Events are
// required.
type Options struct {
	Answerer Answerer
	// Notes is the index as /status/notes and MCP read the notes in it;
	// *index.Browse implements it.
	Notes mcp.Notes
	// Status reports the process's state for /status and /readyz.
	Status func(ctx context.Context) Status
	Events *Events
	// APIKey, when set, is required as "Authorization: Bearer <key>" on
	// /v1/*, /mcp, /events, /status* and /chat/config.
	APIKey string
	// MaxConcurrent bounds the answers generated and MCP tool calls run at
	// once, together; beyond it a request waits for a slot as Slots says,
	// then is answered 429, a tool call a tool error. Default 4.
	MaxConcurrent int
	// Slots keep slots for each kind and say how long a request waits.
	Slots SlotOptions
	// MaxBodyBytes bounds a request body. Default 1 MiB.
	MaxBodyBytes int64
	// CORSOrigins are the browser origins allowed to call the API (CORS),
	// the only other origins whose pages may send more than GET, HEAD and
	// OPTIONS, and the only ones /mcp accepts in an Origin header. Each is
	// scheme://host[:port]; New refuses anything else.
	CORSOrigins []string
	// TrustedHosts are the host names vaultask is addressed by besides IP
	// addresses and localhost: the names people and reverse proxies use.
	// Another name is refused (403) wherever a DNS-rebinding page could
	// use it: on every connection while no APIKey is set, and on loopback
	// connections always. /healthz and /readyz answer any Host.
	TrustedHosts []string
	// Version is the build's version, shown by /status.
	Version string
	// ObsidianVault is the vault's name in Obsidian, which /chat needs to
	// open a cited note there and to save a conversation as a note.
	ObsidianVault string
	// Admin configures /admin's data.
	Admin AdminOptions
	// KeepAlive is how often a completion stream gets a comment while no
	// text flows yet (retrieval, the model's first token). Default 5s.
	KeepAlive time.Duration
	Logger    *slog.Logger

	// SessionKey, MaxMCPSessions and MCPSessionIdle are MCP's
	// mcp.Options.SessionKey, MaxSessions and SessionIdle.
	SessionKey     []byte
	MaxMCPSessions int
	MCPSessionIdle time.Duration
}

// Server is vaultask's HTTP surface: the OpenAI-compatible API, MCP, the
// status endpoints and the live events. It turns requests into rag and
// index calls and errors into statuses, and holds no retrieval logic.
type Server struct {
	opts   Options
	mux    *http.ServeMux
	slots  *slotPool
	events *Events
	log    *slog.Logger
	mcp    *mcp.Server
	admin  *adminGate
	// crossOrigin tells a browser's request from another origin.
	crossOrigin *http.CrossOriginProtection
}

// New returns the server.
func New(opts Options) (*Server, error) {
	if opts.Answerer == nil || opts.Notes == nil || opts.Status == nil || opts.Events == nil {
		return nil, errors.New("transport: Answerer, Notes, Status and Events are required")
	}
	if opts.Admin.Key != "" && (opts.Admin.Check == nil || opts.Admin.Overrides == nil) {
		return nil, errors.New("transport: an admin key needs Admin.Check and Admin.Overrides")
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 4
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	slots, err := newSlotPool(opts.MaxConcurrent, opts.Slots, newHeapReturn())
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), slots: slots,
		events: opts.Events, log: opts.Logger.With(logComponent, "http"), admin: newAdminGate(opts.Admin.Key, opts.Admin.Now)}
	s.crossOrigin = http.NewCrossOriginProtection()
	for _, origin := range opts.CORSOrigins {
		if err := s.crossOrigin.AddTrustedOrigin(origin); err != nil {
			return nil, fmt.Errorf("transport: api.cors_origins: %w", err)
		}
	}
	s.mcp, err = mcp.New(mcp.Options{Retriever: opts.Answerer, Notes: opts.Notes, Version: opts.Version,
		Slot:       func(ctx context.Context) (func(), error) { return s.slots.acquire(ctx, kindTool) },
		Refuse:     s.refuseMCP,
		SessionKey: opts.SessionKey, MaxSessions: opts.MaxMCPSessions, SessionIdle: opts.MCPSessionIdle, Logger: s.log})
	if err != nil {
		return nil, err
	}
	s.routes()
	if err := s.pageRoutes(); err != nil {
		return nil, err
	}
	return s, nil
}

// EndStreams ends, at once, the streams a client holds open only to hear
// what the server might send (MCP's GET stream), and any opened after. At
// shutdown, while the answers still running are let finish, an idle one
// would otherwise hold the process for the whole drain time. The /events
// streams end with Events.Close.
func (s *Server) EndStreams() { s.mcp.EndStreams() }

// routes maps each endpoint. The standard library's ServeMux patterns route
// methods and paths, which is all the routing the API needs.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.Handle("GET /status", s.statusAuthed(http.HandlerFunc(s.status)))
	s.mux.Handle("GET /status/notes", s.statusAuthed(http.HandlerFunc(s.statusNotes)))
	s.mux.Handle("GET /admin/config", s.adminAuthed(http.HandlerFunc(s.getAdminConfig)))
	s.mux.Handle("PUT /admin/config", s.adminAuthed(s.limited(http.HandlerFunc(s.putAdminConfig))))
	s.mux.Handle("GET /events", s.authed(http.HandlerFunc(s.serveEvents)))
	s.mux.Handle("GET /v1/models", s.authed(http.HandlerFunc(s.models)))
	s.mux.Handle("POST /v1/chat/completions", s.authed(s.limited(http.HandlerFunc(s.chatCompletions))))
	s.mux.Handle("/mcp", s.authed(s.mcpGuard(s.limited(s.mcp))))
	s.mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, apiError{Type: invalidRequest, Message: fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path)})
	})
}

// ServeHTTP serves a request, answering CORS preflights for the allowed
// origins first.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("handler panicked", keyPath, r.URL.Path, keyPanic, p)
			writeError(w, http.StatusInternalServerError, apiError{Type: serverFault, Message: "internal error"})
		}
	}()
	if origin := r.Header.Get("Origin"); origin != "" && slices.Contains(s.opts.CORSOrigins, origin) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Retry-After")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				h.Set("Access-Control-Allow-Headers", req)
			}
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if r.URL.Path != "/healthz" && r.URL.Path != "/readyz" && !s.hostAllowed(r) {
		writeError(w, http.StatusForbidden, apiError{Type: invalidRequest, Message: fmt.Sprintf(
			"vaultask is not addressed as %q here: add %q to api.trusted_hosts (VAULTASK_API__TRUSTED_HOSTS), or use its IP address; without VAULTASK_API__KEY a name must be trusted, since a web page can point its own name at this server (DNS rebinding)",
			r.Host, hostOnly(r.Host))})
		return
	}
	if s.crossOrigin.Check(r) != nil {
		s.refuseCrossOrigin(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// refuseCrossOrigin answers a request that a browser sent from a page of
// another origin, not listed in api.cors_origins, with a method that may
// change something or start work (anything but GET, HEAD and OPTIONS: see
// http.CrossOriginProtection, which tells them by Sec-Fetch-Site, or by an
// Origin whose host is not the request's Host from browsers without it).
// A form or a text/plain fetch needs no CORS preflight, so without this,
// and without an API key, any page its visitor opens could start answers
// and web searches here. Clients without either header (curl, SDKs) are not
// refused.
func (s *Server) refuseCrossOrigin(w http.ResponseWriter, r *http.Request) {
	from := "a page of another site (Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site") + ")"
	if origin := r.Header.Get("Origin"); origin != "" {
		from = fmt.Sprintf("a page at %q", origin)
	}
	writeError(w, http.StatusForbidden, apiError{Type: invalidRequest, Code: "cross_origin", Message: fmt.Sprintf(
		"%s may not send %s requests to vaultask: if that page is yours, add its origin to api.cors_origins (VAULTASK_API__CORS_ORIGINS)",
		from, r.Method)})
}

// hostAllowed reports whether a request's Host may reach the server: an IP
// address, localhost, a trusted name, or — with an API key, which a
// rebinding page cannot send, on a connection to a non-loopback address —
// any name.
func (s *Server) hostAllowed(r *http.Request) bool {
	host := hostOnly(r.Host)
	if _, err := netip.ParseAddr(host); err == nil || host == "" || isLocalhost(host) ||
		slices.ContainsFunc(s.opts.TrustedHosts, func(h string) bool { return strings.EqualFold(h, host) }) {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return s.opts.APIKey != "" && ok && !isLoopback(local.String())
}

// authed requires the API key, when one is configured, as a bearer token,
// compared in constant time.
func (s *Server) authed(next http.Handler) http.Handler {
	if s.opts.APIKey == "" {
		return next
	}
	want := []byte("Bearer " + s.opts.APIKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vaultask"`)
			msg := "missing API key: send Authorization: Bearer <VAULTASK_API__KEY>"
			if len(got) > 0 {
				msg = "wrong API key"
			}
			writeError(w, http.StatusUnauthorized, apiError{Type: invalidRequest, Message: msg})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limited bounds the request body: a declared length over the limit is
// refused at once, and a body that runs over it while read fails the read.
func (s *Server) limited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.opts.MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, apiError{Type: invalidRequest, Message: fmt.Sprintf("request body of %d bytes is over the limit of %d", r.ContentLength, s.opts.MaxBodyBytes)})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// readBody reads a request's body whole, bounded by limited; a body over
// the limit is answered 413 and one that cannot be read 400, and ok is false.
func readBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, apiError{Type: invalidRequest, Message: fmt.Sprintf("request body is over the limit of %d bytes", tooBig.Limit)})
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Message: "could not read the request body"})
		return nil, false
	}
	return body, true
}

// mcpGuard refuses, for /mcp, an Origin that is not allowed (a web page's
// script) and not the server's own on a loopback Host; ServeHTTP has
// already refused an untrusted Host.
func (s *Server) mcpGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(s.opts.CORSOrigins, origin) && !ownLoopbackOrigin(r, origin) {
			writeError(w, http.StatusForbidden, apiError{Type: invalidRequest, Message: fmt.Sprintf("origin %q is not allowed (api.cors_origins)", origin)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuseMCP answers a request /mcp refuses before the protocol reads it.
func (s *Server) refuseMCP(w http.ResponseWriter, r mcp.Refusal) {
	writeError(w, r.Status, apiError{Type: invalidRequest, Param: r.Param, Code: r.Code, Message: r.Message})
}

// ownLoopbackOrigin reports whether origin is the request's own origin on
// a loopback Host (Origin http://127.0.0.1:8080, Host 127.0.0.1:8080): a
// page served at this server's loopback address and port, which is this
// server's own. A rebinding page's Host is its own name, which this does
// not take.
func ownLoopbackOrigin(r *http.Request, origin string) bool {
	scheme, host, ok := strings.Cut(origin, "://")
	if !ok || scheme != "http" && scheme != "https" || !strings.EqualFold(host, r.Host) {
		return false
	}
	name := hostOnly(r.Host)
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.IsLoopback() || isLocalhost(name)
}

// hostOnly is a Host header without its port.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.Trim(hostport, "[]")
}

// isLoopback reports whether an address (host and port) is a loopback one.
func isLoopback(hostport string) bool {
	ip, err := netip.ParseAddr(hostOnly(hostport))
	return err == nil && ip.IsLoopback()
}

// isLocalhost reports whether a host name is localhost, which resolves to
// the loopback address only (RFC 6761), subdomains included.
func isLocalhost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// apiError is an error as every endpoint answers it, in the OpenAI API's
// shape, so that a client has one shape to read: its type, the request
// parameter at fault and a machine-readable code when there are any, and a
// message for a person.
type apiError struct {
	Type    errorType
	Param   string // "" when no one parameter is at fault
	Code    string // "" when there is none
	Message string
}

// errorType is what kind of error a client is told it got.
type errorType string

const (
	invalidRequest errorType = "invalid_request_error"
	rateLimited    errorType = "rate_limit_error"
	serverFault    errorType = "server_error"
)

// errorJSON is an apiError on the wire, where a missing param or code is
// null.
type errorJSON struct {
	Message string    `json:"message"`
	Type    errorType `json:"type"`
	Param   *string   `json:"param"`
	Code    *string   `json:"code"`
}

// body is the error as a response body or stream frame holds it:
// {"error":{...}}.
func (e apiError) body() map[string]errorJSON {
	j := errorJSON{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		j.Param = &e.Param
	}
	if e.Code != "" {
		j.Code = &e.Code
	}
	return map[string]errorJSON{"error": j}
}

// writeError answers status with e.
func writeError(w http.ResponseWriter, status int, e apiError) {
	writeJSON(w, status, e.body())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
