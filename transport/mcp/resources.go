package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/vaultask/vaultask/transport/allowweb"
	"github.com/vaultask/vaultask/vault"
)

// resourcePage is how many notes a resources/list page holds.
const resourcePage = 50

// listNotes is a page of resources/list, of the session's scope: on the
// first page the topic notes, then on every page the other indexed notes by
// path. A note's path, and with it whether it is a topic note (one under
// the topic folder), is what editing it cannot change, so the cursor, the
// last path listed, lets a listing paged while notes are edited, added and
// deleted give every note that was there throughout exactly once. A cursor
// that is not one of these starts nowhere.
func (s *Server) listNotes(ctx context.Context, cursor mcp.Cursor) ([]mcp.Resource, mcp.Cursor) {
	scope := sessionScope(ctx)
	out := []mcp.Resource{}
	after := ""
	if cursor != "" {
		path, ok := decodeCursor(cursor)
		if !ok {
			return out, ""
		}
		after = path
	}
	ts, err := s.opts.Notes.Topics(ctx, scope)
	if err != nil {
		s.log.Error("MCP resource list failed", keyErr, err)
		return out, ""
	}
	topics := map[string]bool{}
	for _, t := range ts {
		topics[t.Path] = true
		if cursor == "" {
			out = append(out, mcp.NewResource(noteURI(t.Path, scope), t.Path, mcp.WithResourceTitle(t.Title), mcp.WithMIMEType("text/markdown"),
				mcp.WithResourceDescription("topic note collecting "+nounCount(t.Members, "note"))))
		}
	}
	notes, _, err := s.opts.Notes.NoteList(ctx, vault.NoteQuery{State: vault.StatusIndexed, Scope: scope, After: after, Limit: resourcePage + 1})
	if err != nil {
		s.log.Error("MCP resource list failed", keyErr, err)
		return out, ""
	}
	page := notes[:min(len(notes), resourcePage)]
	for _, n := range page {
		if topics[n.Path] {
			continue
		}
		out = append(out, mcp.NewResource(noteURI(n.Path, scope), n.Path, mcp.WithResourceTitle(n.Title), mcp.WithMIMEType("text/markdown"),
			mcp.WithLastModified(n.IndexedAt.UTC().Format(time.RFC3339))))
	}
	if len(notes) <= resourcePage {
		return out, ""
	}
	return out, encodeCursor(page[len(page)-1].Path)
}

// cursorPrefix starts every resources/list cursor.
const cursorPrefix = "after:"

// encodeCursor is the resources/list cursor of the page that starts after
// the note at path.
func encodeCursor(path string) mcp.Cursor {
	return mcp.Cursor(base64.StdEncoding.EncodeToString([]byte(cursorPrefix + path)))
}

// decodeCursor reads a cursor that encodeCursor made; anything else, from a
// client that made one up, is not ok.
func decodeCursor(c mcp.Cursor) (path string, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(string(c))
	if err != nil {
		return "", false
	}
	path, found := strings.CutPrefix(string(raw), cursorPrefix)
	return path, found && path != ""
}

// readNoteResource serves vault://note/{+path}, under the same gate as the
// tools: with ?allow_web=true a personal note does not exist. A note that
// does not exist is the resources spec's "resource not found", as is a URI
// that names no note; an allow_web that cannot be read is invalid params.
func (s *Server) readNoteResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	u, err := url.Parse(req.Params.URI)
	if err != nil || u.Scheme != "vault" || u.Host != "note" {
		return nil, resourceError(ctx, mcp.RESOURCE_NOT_FOUND, req.Params.URI, fmt.Sprintf("%q is not a vault://note/ URI", req.Params.URI))
	}
	allow, err := allowweb.Query(u.RawQuery)
	if err != nil {
		return nil, resourceError(ctx, mcp.INVALID_PARAMS, req.Params.URI, err.Error())
	}
	scope := vault.ScopeFor(allow || sessionScope(ctx).OpenOnly())
	ref := strings.TrimPrefix(u.Path, "/")
	d, _, err := s.opts.Notes.ResolveNote(ctx, ref, scope)
	if errors.Is(err, vault.ErrNoNote) {
		return nil, resourceError(ctx, mcp.RESOURCE_NOT_FOUND, req.Params.URI, fmt.Sprintf("no note %q", ref))
	}
	if err != nil {
		s.log.Error("MCP resource failed", keyErr, err)
		return nil, errors.New("reading the note failed; the server's log says why")
	}
	n, err := s.opts.Notes.ReadNote(ctx, d.DocID, scope, 0, 0)
	if err != nil {
		s.log.Error("MCP resource failed", keyErr, err)
		return nil, errors.New("reading the note failed; the server's log says why")
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: noteURI(n.Path, scope), MIMEType: "text/markdown", Text: n.Text}}, nil
}

// resourceError is a resources/read error with its JSON-RPC code, which
// mcp-go would otherwise send as -32603 (internal error), and the URI as
// its data. Protocol version 2026-07-28 reports a resource not found as
// invalid params, as mcp-go does for a URI no template matches.
func resourceError(ctx context.Context, code int, uri, msg string) error {
	if code == mcp.RESOURCE_NOT_FOUND && mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		code = mcp.INVALID_PARAMS
	}
	return server.NewHandlerError(jsonRPCError{code: code, msg: msg, uri: uri})
}

// jsonRPCError is an error a handler gives with its JSON-RPC code.
type jsonRPCError struct {
	code     int
	msg, uri string
}

func (e jsonRPCError) Error() string { return e.msg }

func (e jsonRPCError) JSONRPCError() mcp.JSONRPCError {
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.JSONRPCErrorDetails{Code: e.code, Message: e.msg, Data: map[string]string{"uri": e.uri}}}
}
