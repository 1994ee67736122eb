package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/transport/allowweb"
	"github.com/vaultask/vaultask/vault"
)

// instructions tell an MCP client what the server is for; Claude Code
// truncates instructions over 2 KB (a test keeps them under).
const instructions = `vaultask searches and reads the user's Obsidian vault, their own notes.
- vault_search finds the passages that answer a question; each hit has the note's path and a link to read it.
- vault_read returns a note's text by path (or by name, or alias), in pages for long notes.
- vault_neighbors lists the notes linked to and from a note, its topic notes and the other notes they collect.
- vault_topics lists the topic notes (maps of content) with how many notes each collects.
Cite a note as a path-qualified wikilink, e.g. [[Folder/Note]]. The vault is the authority on the user's own
matters; say so when it has nothing on a question rather than guessing.
Every tool takes allow_web (default false). Pass allow_web=true when what you read may be combined with web
content or leave this conversation for the web: the tools then see only the user's open notes, and personal
notes do not exist for that call.`

// Retriever finds the passages that answer a question; *rag.Pipeline
// implements it.
type Retriever interface {
	Retrieve(ctx context.Context, q rag.Question) (*rag.Retrieval, error)
}

// Notes is the index as the tools and resources read the notes in it;
// *index.Browse implements it. Every method applies the scope inside its
// queries.
type Notes interface {
	ResolveNote(ctx context.Context, ref string, scope vault.Scope) (vault.Doc, []vault.Doc, error)
	ReadNote(ctx context.Context, docID string, scope vault.Scope, offset, limit int) (vault.NoteText, error)
	Neighbours(ctx context.Context, docIDs []string, scope vault.Scope) ([]vault.Neighbour, error)
	Topics(ctx context.Context, scope vault.Scope) ([]vault.Topic, error)
	NoteList(ctx context.Context, q vault.NoteQuery) ([]vault.NoteEntry, int, error)
}

// Refusal is a request refused before the protocol reads it: its status,
// the parameter at fault and a machine-readable code ("" for none), and a
// message for a person.
type Refusal struct {
	Status      int
	Param, Code string
	Message     string
}

// Options configure a Server. Retriever, Notes, Slot and Refuse are
// required.
type Options struct {
	Retriever Retriever
	Notes     Notes
	// Slot takes one of the server's slots for a tool call and returns its
	// release, so that tool calls count against the answers' bound. An
	// error of the call's context (the client went away) ends the call;
	// any other says why no slot came, and the model reads it as a tool
	// error.
	Slot func(ctx context.Context) (release func(), err error)
	// Refuse answers a Refusal in the HTTP API's error shape.
	Refuse func(w http.ResponseWriter, r Refusal)
	// Version is the build's version, which initialize reports.
	Version string
	// SessionKey signs session ids, which carry their session's scope:
	// SessionKeyLen bytes, the same across restarts so that sessions
	// outlive them. Empty: a random key, and the sessions of this Server
	// end with it (their ids then see open notes only).
	SessionKey []byte
	// MaxSessions bounds the sessions whose state is kept in memory;
	// beyond it the least recently used is dropped. Default 1000.
	MaxSessions int
	// SessionIdle is how long a session's state is kept unused. Default 30
	// minutes. A dropped session goes on working.
	SessionIdle time.Duration
	Logger      *slog.Logger
}

// Defaults of Options.MaxSessions and Options.SessionIdle.
const (
	defaultMaxSessions = 1000
	defaultSessionIdle = 30 * time.Minute
)

// Server is /mcp: the MCP server on streamable HTTP. Tools are read-only
// and closed-world; their mistakes come back as tool errors the model can
// read, not protocol errors. A session's id carries its scope, signed
// (session.go), so that the session stays good after the server dropped
// its state and across a restart: a client of the official TypeScript SDK
// does not initialize again after a 404 for its session.
type Server struct {
	opts     Options
	log      *slog.Logger
	handler  *server.StreamableHTTPServer
	sessions *sessions
	// streams is cancelled by EndStreams, and with it every GET stream.
	streams    context.Context
	endStreams context.CancelFunc
}

// New returns the server.
func New(opts Options) (*Server, error) {
	if opts.Retriever == nil || opts.Notes == nil || opts.Slot == nil || opts.Refuse == nil {
		return nil, errors.New("mcp: Retriever, Notes, Slot and Refuse are required")
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = defaultMaxSessions
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = defaultSessionIdle
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	signer, err := newSessionSigner(opts.SessionKey)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger}
	s.streams, s.endStreams = context.WithCancel(context.Background())
	hooks := &server.Hooks{}
	// mcp-go lists only resources registered one by one; the notes change
	// with the vault, so the listing is filled in after it, page by page.
	hooks.AddAfterListResources(func(ctx context.Context, _ any, req *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		res.Resources, res.NextCursor = s.listNotes(ctx, req.Params.Cursor)
	})
	cache := newSessionCache(opts.MaxSessions, opts.SessionIdle, func(id string) { endSession(s.handler, id) }, s.log)
	cache.followRegistrations(hooks)
	s.sessions = &sessions{signer: signer, cache: cache, ended: newEndedSessions(maxEndedSessions), log: s.log}
	ms := server.NewMCPServer("vaultask", opts.Version,
		server.WithInstructions(instructions),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithToolHandlerMiddleware(s.toolSlot),
	)
	s.addTools(ms)
	ms.AddResourceTemplate(mcp.NewResourceTemplate("vault://note/{+path}", "note",
		mcp.WithTemplateTitle("A note of the vault"),
		mcp.WithTemplateDescription("A note's Markdown by its vault path; add ?allow_web=true to read it only if it is open."),
		mcp.WithTemplateMIMEType("text/markdown"),
	), s.readNoteResource)
	s.handler = server.NewStreamableHTTPServer(ms,
		// vaultask checks Origin and Host itself (transport's mcpGuard),
		// with the operator's trusted hosts for a reverse proxy.
		server.WithDisableLocalhostProtection(true),
		server.WithStreamableHTTPLogger(s.log),
		server.WithSessionIdManagerResolver(sessionIDResolver{signer: signer}),
	)
	return s, nil
}

// EndStreams ends, at once, the GET streams open, which only wait for what
// the server might send, and any opened after; requests go on being
// served.
func (s *Server) EndStreams() { s.endStreams() }

// ServeHTTP serves each request under the scope its URL and its session
// leave it (sessions.requestScope), which the tools and resources read
// from its context; an allow_web that cannot be read is a 400. A session
// its client ended is answered 404, every request of it, as the transport
// spec requires; a DELETE that this server signed the id of ends one. A
// GET stream, which only waits for what the server might send, ends at
// EndStreams.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	scope, err := s.sessions.requestScope(r)
	if err != nil {
		s.opts.Refuse(w, Refusal{Status: http.StatusBadRequest, Param: allowweb.Name, Message: err.Error()})
		return
	}
	id := r.Header.Get(sessionHeader)
	if id != "" && s.sessions.ended.has(id) {
		s.opts.Refuse(w, Refusal{Status: http.StatusNotFound, Code: "session_terminated",
			Message: "this MCP session was ended by its client (DELETE): initialize a new one"})
		return
	}
	if _, signed := s.sessions.signer.scope(id); signed && r.Method == http.MethodDelete {
		s.sessions.ended.add(id)
	}
	s.sessions.cache.touch(id)
	ctx := context.WithValue(r.Context(), sessionScopeKey{}, scope)
	if r.Method == http.MethodGet {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.streams, cancel)()
	}
	s.handler.ServeHTTP(w, r.WithContext(ctx))
}

// endSession frees what mcp-go keeps of a session the way a client's
// DELETE does (mcp-go offers no other way to one session): h unregisters it
// and forgets its state. The id stays good; its next request is served
// like any of a session mcp-go does not hold.
func endSession(h http.Handler, id string) {
	r, _ := http.NewRequestWithContext(context.Background(), http.MethodDelete, "/mcp", nil)
	r.Header.Set(sessionHeader, id)
	h.ServeHTTP(discardResponse{header: http.Header{}}, r)
}

// discardResponse is a response nobody reads.
type discardResponse struct{ header http.Header }

func (d discardResponse) Header() http.Header         { return d.header }
func (d discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (d discardResponse) WriteHeader(int)             {}

// noteURI is the MCP resource URI of a note: vault://note/<path>, with
// ?allow_web=true when it was found under the open scope, so that following
// the link reads under the same gate as the call that gave it.
func noteURI(path string, scope vault.Scope) string {
	uri := "vault://note/" + (&url.URL{Path: path}).EscapedPath()
	if scope.OpenOnly() {
		uri += "?allow_web=true"
	}
	return uri
}

// toolSlot runs a tool call in one of the slots (Options.Slot), so that
// MCP searches count against api.max_concurrent as answers do: six long
// searches beside the slots once held a normal answer up thirtyfold. Tool
// calls may not take the slots kept for answers (api.reserved_for_answers):
// six clients looping long searches once held every slot, and chat got
// 429s. When no slot comes free within api.slot_wait the call is a tool
// error the model can read, as a chat request is a 429.
func (s *Server) toolSlot(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		release, err := s.opts.Slot(ctx)
		switch {
		case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
			return nil, err // the client went away
		case err != nil:
			return mcp.NewToolResultError(err.Error()), nil
		}
		defer release()
		return next(ctx, req)
	}
}
