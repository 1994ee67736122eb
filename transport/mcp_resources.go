package transport

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
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
// tools: with ?allow_web=true a personal note does not exist.
func (s *Server) readNoteResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	u, err := url.Parse(req.Params.URI)
	if err != nil || u.Scheme != "vault" || u.Host != "note" {
		return nil, fmt.Errorf("%q is not a vault://note/ URI", req.Params.URI)
	}
	allow, err := allowWebQuery(u.RawQuery)
	if err != nil {
		return nil, err
	}
	scope := vault.ScopeFor(allow || sessionScope(ctx).OpenOnly())
	ref := strings.TrimPrefix(u.Path, "/")
	d, _, err := s.opts.Notes.ResolveNote(ctx, ref, scope)
	if errors.Is(err, vault.ErrNoNote) {
		return nil, fmt.Errorf("no note %q", ref)
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
