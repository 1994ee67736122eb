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

// sessionOpenOnlyKey carries whether an MCP client asked for open notes
// only on the endpoint's URL (/mcp?allow_web=true), in its requests'
// contexts.
type sessionOpenOnlyKey struct{}

// sessionOpenOnly reports whether the session was opened with
// ?allow_web=true: then every tool call and resource of it sees open notes
// only, whatever a call asks; resources/list has no arguments, so it is the
// only scope a listing can have.
func sessionOpenOnly(ctx context.Context) bool {
	openOnly, _ := ctx.Value(sessionOpenOnlyKey{}).(bool)
	return openOnly
}

// newMCP is the MCP server on streamable HTTP. Tools are read-only and
// closed-world; their mistakes come back as tool errors the model can read,
// not protocol errors. Session ids are not checked against a table (mcp-go's
// default), so they stay valid across a restart: Claude Code does not
// initialize again after a 404.
func (s *Server) newMCP() http.Handler {
	hooks := &server.Hooks{}
	// mcp-go lists only resources registered one by one; the notes change
	// with the vault, so the listing is filled in after it, page by page.
	hooks.AddAfterListResources(func(ctx context.Context, _ any, req *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		res.Resources, res.NextCursor = s.listNotes(ctx, req.Params.Cursor)
	})
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
	h := server.NewStreamableHTTPServer(ms,
		// vaultask checks Origin and Host itself (mcpGuard), with the
		// operator's trusted hosts for a reverse proxy.
		server.WithDisableLocalhostProtection(true),
		server.WithStreamableHTTPLogger(s.log),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			allow, _ := allowWebParam(r) // checked before the request got here
			return context.WithValue(ctx, sessionOpenOnlyKey{}, allow)
		}),
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := allowWebParam(r); err != nil {
			writeError(w, http.StatusBadRequest, apiError{Type: invalidRequest, Param: "allow_web", Message: err.Error()})
			return
		}
		h.ServeHTTP(w, r)
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
