package mcp

// Log attribute keys of package mcp.
const (
	keyErr     = "err"
	keyHeld    = "held"
	keyReason  = "reason"
	keySession = "session"
)
