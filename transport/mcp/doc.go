// Package mcp is vaultask's MCP server, served at /mcp on streamable HTTP:
// the tools (vault_search, vault_read, vault_neighbors, vault_topics), the
// notes as resources (vault://note/<path>), and the sessions, whose ids
// carry their scope, signed, and whose state mcp-go keeps in a bounded
// cache.
//
//   - server.go: the Server, what it reads (Retriever, Notes) and how it
//     is wired into the HTTP surface (Options: a slot per tool call, the
//     API's error shape for a request it refuses); each request's scope
//     and session checked before mcp-go reads it; a session's state let go
//     of in mcp-go.
//   - tools.go: the tools, their arguments read strictly, their results
//     structured and as text.
//   - resources.go: resources/list paged by path, resources/read.
//   - session.go: signed session ids, a request's scope, the sessions
//     their clients ended.
//   - cache.go: the bounded cache of what mcp-go keeps of a session.
//
// It is the only package that imports github.com/mark3labs/mcp-go (a
// module rule in tstest/deptest holds that). transport mounts it behind
// its auth, Host and Origin checks and body limit. It may import rag (the
// question and its retrieval), transport/allowweb (allow_web read
// strictly) and vault (the nouns: Scope, Doc, NoteQuery, …); like
// transport, it never imports index, so it never links SQLite.
package mcp
