// Package transport is vaultask's HTTP surface: the OpenAI-compatible shim, MCP,
// /chat, /admin, auth and health. It is the only place errors become HTTP
// statuses and holds no retrieval logic.
//
// It reads the index through the Notes interface it declares, which
// *index.Store satisfies, and /admin's overrides file through Overrides,
// which *config.Overrides satisfies. It may import rag, static and vault
// (the nouns: Scope, Doc, NoteQuery, …). It never imports index, so it
// never links SQLite, nor config, whose file it reaches only through
// Overrides.
package transport
