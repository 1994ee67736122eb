package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/transport/allowweb"
	"github.com/vaultask/vaultask/vault"
)

// addTools registers the tools, each read-only and closed-world, taking
// allow_web, with an output schema of single types.
func (s *Server) addTools(ms *server.MCPServer) {
	readOnly := []mcp.ToolOption{
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	}
	allowWeb := mcp.WithBoolean("allow_web", mcp.Description("true when the result may be combined with web content: only open notes are seen; default false (the whole vault, personal notes included)"), mcp.DefaultBool(false))
	tool := func(name, title, desc string, out func(*mcp.Tool), opts ...mcp.ToolOption) mcp.Tool {
		all := append([]mcp.ToolOption{mcp.WithTitleAnnotation(title), mcp.WithToolTitle(title), mcp.WithDescription(desc), allowWeb}, readOnly...)
		all = append(all, opts...)
		t := mcp.NewTool(name, all...)
		out(&t)
		singleTypes(t.OutputSchema.Properties)
		singleTypes(t.OutputSchema.Defs)
		return t
	}
	ms.AddTool(tool("vault_search", "Search the vault", "Find the passages of the user's notes that best answer a question, best first.",
		func(t *mcp.Tool) { mcp.WithOutputSchema[searchResult]()(t) },
		mcp.WithString("query", mcp.Required(), mcp.Description("the question or search words")),
		mcp.WithNumber("k", mcp.Description("how many passages, 1 to 20 (default 8)"), mcp.Min(1), mcp.Max(20)),
	), s.vaultSearch)
	ms.AddTool(tool("vault_read", "Read a note", "Return a note's text by its path, name or alias; long notes come in pages (offset, limit in bytes).",
		func(t *mcp.Tool) { mcp.WithOutputSchema[readResult]()(t) },
		mcp.WithString("path", mcp.Required(), mcp.Description("the note's vault path (with or without .md), its name, or an alias")),
		mcp.WithNumber("offset", mcp.Description("where to start, in bytes (default 0)"), mcp.Min(0)),
		mcp.WithNumber("limit", mcp.Description("how many bytes at most (default 20000)"), mcp.Min(1), mcp.Max(200000)),
	), s.vaultRead)
	ms.AddTool(tool("vault_neighbors", "Linked notes", "List the notes one link away from a note: what it links to, what links to it, its topic notes, the notes it collects when it is a topic note, and its siblings under a topic.",
		func(t *mcp.Tool) { mcp.WithOutputSchema[neighborsResult]()(t) },
		mcp.WithString("path", mcp.Required(), mcp.Description("the note's vault path, name or alias")),
	), s.vaultNeighbors)
	ms.AddTool(tool("vault_topics", "Topic notes", "List the topic notes (maps of content) with how many notes each collects.",
		func(t *mcp.Tool) { mcp.WithOutputSchema[topicsResult]()(t) },
	), s.vaultTopics)
}

// singleTypes rewrites, in a generated JSON schema, every "type" that is a
// list (["null","array"] for a Go slice) to its one type other than null:
// Gemini's function declarations and OpenAPI 3.0 take a single type only,
// and every list vaultask returns is [] when empty, never null.
func singleTypes(v any) {
	switch v := v.(type) {
	case map[string]any:
		if types, ok := v["type"].([]any); ok {
			for _, t := range types {
				if t != "null" {
					v["type"] = t
				}
			}
		}
		for _, sub := range v {
			singleTypes(sub)
		}
	case []any:
		for _, sub := range v {
			singleTypes(sub)
		}
	}
}

// noteRef is a note as the tools name it.
type noteRef struct {
	Path     string `json:"path"`
	Title    string `json:"title"`
	Citation string `json:"citation"` // the wikilink that cites it
	URI      string `json:"uri"`      // its MCP resource
}

func refOf(d vault.Doc, scope vault.Scope) noteRef {
	return noteRef{Path: d.Path, Title: d.Title, Citation: rag.Link(d.Path, d.Title), URI: noteURI(d.Path, scope)}
}

type searchHit struct {
	noteRef
	Heading    string   `json:"heading,omitempty"`
	Snippet    string   `json:"snippet"`
	Score      float64  `json:"score"`
	Provenance []string `json:"provenance"` // the searches that found it: vector, fts, graph
	Reach      string   `json:"reach,omitempty"`
}

type searchResult struct {
	Query string      `json:"query"`
	Scope string      `json:"scope"`
	Hits  []searchHit `json:"hits"`
	// Coverage is how well the vault covers the query: covered, thin (the
	// hits are the nearest it has and may not answer it), silent (nothing
	// in it is about this: look elsewhere) or indexing.
	Coverage rag.Coverage `json:"coverage"`
	// Silent is set when the vault is silent on the query.
	Silent bool `json:"silent"`
}

type readResult struct {
	noteRef
	Text   string `json:"text"`
	Offset int    `json:"offset"`
	Length int    `json:"length"` // of the whole note, in bytes
	More   bool   `json:"more"`   // text continues after this page
	// Also are the other notes of the name asked for, when it named more
	// than one.
	Also []noteRef `json:"also,omitempty"`
}

type neighbor struct {
	noteRef
	Relation string `json:"relation"` // topic, member, sibling, link or backlink
	// Via and ViaPath name, for a sibling, the topic note both are under.
	Via     string `json:"via,omitempty"`
	ViaPath string `json:"via_path,omitempty"`
}

type neighborsResult struct {
	Note      noteRef    `json:"note"`
	Neighbors []neighbor `json:"neighbors"`
	Also      []noteRef  `json:"also,omitempty"`
}

type topicsResult struct {
	Topics []topicEntry `json:"topics"`
}

type topicEntry struct {
	noteRef
	Members int `json:"members"`
}

// toolArgs reads a tool call's arguments, with a message for the model
// when one is wrong.
type toolArgs struct{ req mcp.CallToolRequest }

// allowWeb is the call's allow_web, false when it is not given, read from
// the arguments as they came (allowWebJSON); a session of open notes only
// makes it true whatever the call says.
func (a toolArgs) allowWeb(ctx context.Context) (bool, error) {
	raw := a.req.Params.RawArguments
	if len(raw) == 0 && a.req.Params.Arguments != nil { // a call made in Go, not read from the wire
		var err error
		if raw, err = json.Marshal(a.req.Params.Arguments); err != nil {
			return false, fmt.Errorf("the arguments cannot be read: %w", err)
		}
	}
	allowWeb, err := allowweb.JSON(raw)
	if err != nil {
		return false, err
	}
	return allowWeb || sessionScope(ctx).OpenOnly(), nil
}

// scope is the call's scope, vault.ScopeFor its allow_web.
func (a toolArgs) scope(ctx context.Context) (vault.Scope, error) {
	allowWeb, err := a.allowWeb(ctx)
	return vault.ScopeFor(allowWeb), err
}

// note is what a tool on one note (vault_read, vault_neighbors) is first
// given: the call's scope and the note's path, name or alias, in that
// order of checking.
func (a toolArgs) note(ctx context.Context) (scope vault.Scope, ref string, err error) {
	if scope, err = a.scope(ctx); err != nil {
		return scope, "", err
	}
	ref, err = a.text("path")
	return scope, ref, err
}

func (a toolArgs) text(name string) (string, error) {
	v, ok := a.req.GetArguments()[name]
	s, isString := v.(string)
	switch {
	case !ok || v == nil:
		return "", fmt.Errorf("%s is required", name)
	case !isString:
		return "", fmt.Errorf("%s must be a string", name)
	case strings.TrimSpace(s) == "":
		return "", fmt.Errorf("%s is empty", name)
	}
	return s, nil
}

func (a toolArgs) number(name string, def, lo, hi int) (int, error) {
	v, ok := a.req.GetArguments()[name]
	if !ok || v == nil {
		return def, nil
	}
	f, isNumber := v.(float64)
	if !isNumber || f != float64(int(f)) || int(f) < lo || int(f) > hi {
		return 0, fmt.Errorf("%s must be a whole number from %d to %d, not %v", name, lo, hi, v)
	}
	return int(f), nil
}

// toolResult is a tool's answer: the structured result and the same data as
// text, for clients that read only text.
func toolResult(v any, text string) *mcp.CallToolResult {
	return mcp.NewToolResultStructured(v, text)
}

func (s *Server) toolFailed(err error) *mcp.CallToolResult {
	s.log.Error("MCP tool failed", keyErr, err)
	return mcp.NewToolResultError("the tool failed; the server's log says why")
}

func (s *Server) vaultSearch(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a := toolArgs{req}
	allowWeb, err := a.allowWeb(ctx)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	scope := vault.ScopeFor(allowWeb)
	query, err := a.text("query")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	k, err := a.number("k", 8, 1, 20)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	r, err := s.opts.Retriever.Retrieve(ctx, rag.Question{Text: query, AllowWeb: allowWeb, K: rag.Overrides{FinalTopK: k}})
	var le *rag.LimitError
	switch {
	case errors.As(err, &le):
		return mcp.NewToolResultError(fmt.Sprintf("query is %d bytes, over the limit of %d bytes (api.max_question_bytes): search with fewer words", le.Size, le.Max)), nil
	case err != nil:
		return s.toolFailed(err), nil
	}
	return searchToolResult(r, scope), nil
}

// searchToolResult is vault_search's answer: the hits, as structured
// content and as text, and a link to each note they are from.
func searchToolResult(r *rag.Retrieval, scope vault.Scope) *mcp.CallToolResult {
	out := searchResult{Query: r.Query, Scope: r.Trace.Scope, Coverage: r.Coverage, Silent: r.Silent, Hits: []searchHit{}}
	var text strings.Builder
	switch c := r.Coverage; {
	case r.Silent:
		fmt.Fprintf(&text, "The vault is silent on %q: nothing in it is about this. Look elsewhere, or tell the user their notes do not cover it.\n", r.Query)
	case c.Outcome == rag.OutcomeIndexing:
		fmt.Fprintf(&text, "The vault is still being indexed%s, so notes on %q may not be searchable yet. %s so far (%s notes):\n",
			progress(c), r.Query, nounCount(len(r.Hits), "passage"), out.Scope)
	case c.Outcome == rag.OutcomeThin:
		fmt.Fprintf(&text, "The vault says little on %q: these %s are the nearest it has and may not answer it; check them before relying on them, or look elsewhere (%s notes):\n",
			r.Query, nounCount(len(r.Hits), "passage"), out.Scope)
	case c.Grey:
		fmt.Fprintf(&text, "%s for %q (%s notes); they may not answer all of it: read them before relying on them.\n", nounCount(len(r.Hits), "passage"), r.Query, out.Scope)
	default:
		fmt.Fprintf(&text, "%s for %q (%s notes):\n", nounCount(len(r.Hits), "passage"), r.Query, out.Scope)
	}
	res := &mcp.CallToolResult{}
	for i, h := range r.Hits {
		if r.Silent {
			break
		}
		hit := searchHit{noteRef: refOf(vault.Doc{Path: h.Chunk.Path, Title: h.Chunk.Title}, scope), Heading: h.Chunk.HeadingPath,
			Snippet: snippet(h.Chunk.Body, 400), Score: h.Score, Reach: h.Reach()}
		hit.Provenance = []string{}
		for _, src := range h.Sources {
			hit.Provenance = append(hit.Provenance, string(src))
		}
		out.Hits = append(out.Hits, hit)
		fmt.Fprintf(&text, "\n%d. %s", i+1, hit.Citation)
		if hit.Heading != "" {
			fmt.Fprintf(&text, " › %s", hit.Heading)
		}
		fmt.Fprintf(&text, " (%s)\n%s\n", strings.Join(hit.Provenance, "+"), hit.Snippet)
	}
	res.StructuredContent = out
	res.Content = []mcp.Content{mcp.NewTextContent(text.String())}
	seen := map[string]bool{}
	for _, h := range out.Hits {
		if !seen[h.Path] {
			seen[h.Path] = true
			res.Content = append(res.Content, mcp.NewResourceLink(h.URI, h.Title, h.Path, "text/markdown"))
		}
	}
	return res
}

// progress is how far the index is through its first read of the vault,
// " (N of M notes so far)", or "" when that is not known.
func progress(c rag.Coverage) string {
	if c.Total == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d notes so far)", c.Done, c.Total)
}

// snippet is the start of a passage, whitespace folded, cut at a word.
func snippet(body string, n int) string {
	s := strings.Join(strings.Fields(body), " ")
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.ToValidUTF8(cut, "") + "…"
}

// resolve finds the note a tool names, and the other notes of that name.
// Under ScopeOpen a personal note does not exist: not found, not an
// alternative, and the refusal never names it.
func (s *Server) resolve(ctx context.Context, ref string, scope vault.Scope) (vault.Doc, []noteRef, *mcp.CallToolResult) {
	d, alts, err := s.opts.Notes.ResolveNote(ctx, ref, scope)
	switch {
	case errors.Is(err, vault.ErrNoNote):
		return d, nil, mcp.NewToolResultError(fmt.Sprintf("no note %q: try vault_search to find it", ref))
	case err != nil:
		return d, nil, s.toolFailed(err)
	}
	var also []noteRef
	for _, a := range alts {
		also = append(also, refOf(a, scope))
	}
	return d, also, nil
}

// alsoText tells the model of the other notes of the same name.
func alsoText(also []noteRef) string {
	if len(also) == 0 {
		return ""
	}
	var paths []string
	for _, a := range also {
		paths = append(paths, a.Path)
	}
	return "\nOther notes of that name: " + strings.Join(paths, ", ") + "\n"
}

func (s *Server) vaultRead(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a := toolArgs{req}
	scope, ref, err := a.note(ctx)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	offset, err := a.number("offset", 0, 0, 1<<30)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	limit, err := a.number("limit", 20000, 1, 200000)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	d, also, fail := s.resolve(ctx, ref, scope)
	if fail != nil {
		return fail, nil
	}
	n, err := s.opts.Notes.ReadNote(ctx, d.DocID, scope, offset, limit)
	if err != nil {
		return s.toolFailed(err), nil
	}
	out := readResult{noteRef: refOf(n.Doc, scope), Text: n.Text, Offset: n.Offset, Length: n.Length, More: n.Offset+len(n.Text) < n.Length, Also: also}
	head := fmt.Sprintf("%s (%s), bytes %d to %d of %d", out.Citation, out.Path, n.Offset, n.Offset+len(n.Text), n.Length)
	if out.More {
		head += fmt.Sprintf("; more with offset %d", n.Offset+len(n.Text))
	}
	return toolResult(out, head+alsoText(also)+"\n\n"+n.Text), nil
}

func (s *Server) vaultNeighbors(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	scope, ref, err := toolArgs{req}.note(ctx)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	d, also, fail := s.resolve(ctx, ref, scope)
	if fail != nil {
		return fail, nil
	}
	nb, err := s.opts.Notes.Neighbours(ctx, []string{d.DocID}, scope)
	if err != nil {
		return s.toolFailed(err), nil
	}
	out := neighborsResult{Note: refOf(d, scope), Neighbors: []neighbor{}, Also: also}
	var text strings.Builder
	fmt.Fprintf(&text, "Notes one link from %s:%s\n", out.Note.Citation, alsoText(also))
	for _, n := range nb {
		e := neighbor{noteRef: refOf(n.Doc, scope), Relation: string(n.Relation)}
		line := fmt.Sprintf("- %s: %s", e.Relation, e.Citation)
		if n.Via != "" {
			if via, _, err := s.opts.Notes.ResolveNote(ctx, n.Via, scope); err == nil {
				e.Via, e.ViaPath = via.Title, via.Path
				line += " (via " + via.Title + ")"
			}
		}
		out.Neighbors = append(out.Neighbors, e)
		text.WriteString(line + "\n")
	}
	if len(nb) == 0 {
		text.WriteString("(none)\n")
	}
	return toolResult(out, text.String()), nil
}

func (s *Server) vaultTopics(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	scope, err := toolArgs{req}.scope(ctx)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	ts, err := s.opts.Notes.Topics(ctx, scope)
	if err != nil {
		return s.toolFailed(err), nil
	}
	out := topicsResult{Topics: []topicEntry{}}
	var text strings.Builder
	fmt.Fprintf(&text, "%s:\n", nounCount(len(ts), "topic note"))
	for _, t := range ts {
		out.Topics = append(out.Topics, topicEntry{noteRef: refOf(t.Doc, scope), Members: t.Members})
		fmt.Fprintf(&text, "- %s: %s\n", rag.Link(t.Path, t.Title), nounCount(t.Members, "note"))
	}
	return toolResult(out, text.String()), nil
}
