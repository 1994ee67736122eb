// Package transport is vaultask's HTTP surface: the OpenAI-compatible shim,
// /chat, /admin, the events, status, auth and health, and the route to MCP
// (transport/mcp), which it serves behind the same auth, Host and Origin
// checks and body limit, its tool calls in the same slots as the answers.
// It is the only place errors become HTTP statuses, in one shape
// (writeError), MCP's refusals included, and holds no retrieval logic.
//
// It reads the index through mcp.Notes, which *index.Browse satisfies, and
// /admin's overrides file through Overrides, which *config.Overrides
// satisfies. It may import rag, static, transport/allowweb (allow_web
// read strictly), transport/mcp and vault (the nouns: Scope, Doc,
// NoteQuery, …). It never imports index, so it never links SQLite, nor
// config, whose file it reaches only through Overrides, nor mcp-go, which
// transport/mcp alone imports.
package transport
