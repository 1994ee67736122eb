// Package transport is vaultask's HTTP surface: the OpenAI-compatible shim, MCP,
// /chat, /admin, auth and health. It is the only place errors become HTTP
// statuses and holds no retrieval logic.
//
// It may import rag, static and index (read types only).
package transport
