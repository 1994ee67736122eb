package transport

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/vaultask/vaultask/vault"
)

// mcpInstructions tells an MCP client what the server is for; Claude Code
// truncates instructions over 2 KB (a test keeps them under).
const mcpInstructions = `vaultask searches and reads the user's Obsidian vault, their own notes.
- vault_search finds the passages that answer a question; each hit has the note's path and a link to read it.
- vault_read returns a note's text by path (or by name, or alias), in pages for long notes.
- vault_neighbors lists the notes linked to and from a note, its topic notes and the other notes they collect.
- vault_topics lists the topic notes (maps of content) with how many notes each collects.
Cite a note as a path-qualified wikilink, e.g. [[Folder/Note]]. The vault is the authority on the user's own
matters; say so when it has nothing on a question rather than guessing.
Every tool takes allow_web (default false). Pass allow_web=true when what you read may be combined with web
content or leave this conversation for the web: the tools then see only the user's open notes, and personal
notes do not exist for that call.`

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

// newMCP is the MCP server on streamable HTTP. Tools are read-only and
// closed-world; their mistakes come back as tool errors the model can read,
// not protocol errors. A session's id carries its scope, signed
// (mcp_session.go), so that the session stays good after the server
// dropped its state and across a restart: a client of the official
// TypeScript SDK does not initialize again after a 404 for its session.
func (s *Server) newMCP() (http.Handler, error) {
	signer, err := newSessionSigner(s.opts.SessionKey)
	if err != nil {
		return nil, err
	}
	hooks := &server.Hooks{}
	// mcp-go lists only resources registered one by one; the notes change
	// with the vault, so the listing is filled in after it, page by page.
	hooks.AddAfterListResources(func(ctx context.Context, _ any, req *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		res.Resources, res.NextCursor = s.listNotes(ctx, req.Params.Cursor)
	})
	var h *server.StreamableHTTPServer
	cache := newSessionCache(s.opts.MaxMCPSessions, s.opts.MCPSessionIdle, func(id string) { endSession(h, id) }, s.log)
	cache.followRegistrations(hooks)
	s.sessions = &mcpSessions{signer: signer, cache: cache, ended: newEndedSessions(maxEndedSessions), log: s.log}
	ms := server.NewMCPServer("vaultask", s.opts.Version,
		server.WithInstructions(mcpInstructions),
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
	h = server.NewStreamableHTTPServer(ms,
		// vaultask checks Origin and Host itself (mcpGuard), with the
		// operator's trusted hosts for a reverse proxy.
		server.WithDisableLocalhostProtection(true),
		server.WithStreamableHTTPLogger(s.log),
		server.WithSessionIdManagerResolver(sessionIDResolver{signer: signer}),
	)
	return s.scoped(h), nil
}

// scoped serves each MCP request under the scope its URL and its session
// leave it (mcpSessions.requestScope), which the tools and resources read
// from its context; an allow_web that cannot be read is a 400. A session
// its client ended is answered 404, every request of it, as the transport
// spec requires; a DELETE that this server signed the id of ends one. A GET
// stream, which only waits for what the server might send, ends at
// EndStreams.
func (s *Server) scoped(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, err := s.sessions.requestScope(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: allowWebName, Message: err.Error()})
			return
		}
		id := r.Header.Get(sessionHeader)
		if id != "" && s.sessions.ended.has(id) {
			writeError(w, http.StatusNotFound, apiError{Type: invalidRequest, Code: "session_terminated",
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
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// toolSlot runs a tool call in one of the slots, so that MCP searches
// count against api.max_concurrent as answers do: six long searches beside
// the slots once held a normal answer up thirtyfold. Tool calls may not
// take the slots kept for answers (api.reserved_for_answers): six clients
// looping long searches once held every slot, and chat got 429s. When no
// slot comes free within api.slot_wait the call is a tool error the model
// can read, as a chat request is a 429.
func (s *Server) toolSlot(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		release, err := s.slots.acquire(ctx, kindTool)
		var busy *busyError
		switch {
		case errors.As(err, &busy):
			return mcp.NewToolResultError(busy.Error()), nil
		case err != nil:
			return nil, err // the client went away
		}
		defer release()
		return next(ctx, req)
	}
}
