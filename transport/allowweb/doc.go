// Package allowweb reads allow_web, the one parameter that narrows what a
// caller sees, strictly, here and nowhere else, for every way it comes: a
// URL's query (/status, /status/notes, /events, /mcp, /v1, a vault://
// resource URI) and a JSON object's top level (a /v1 request body, an MCP
// tool call's arguments). A spelling that a lenient reader would skip
// ("ALLOW_WEB", "allowWeb") or a value it would read as false could
// otherwise leave a caller who asked for open notes only with the whole
// vault; so:
//   - a name that is allow_web but for case or separators is refused,
//     naming it, as is allow_web given twice;
//   - the value is true or false exactly: the words in a query, a JSON
//     boolean in a body.
//
// vault.ScopeFor turns what is read into the scope. transport and
// transport/mcp read it here. It imports nothing of the module.
package allowweb
