package transport

// Log attribute keys of package transport.
const (
	logComponent = "component"
	keyErr       = "err"
	keyFile      = "file"
	keyHeld      = "held"
	keyKeys      = "keys"
	keyPanic     = "panic"
	keyPath      = "path"
	keyReason    = "reason"
	keySession   = "session"
)
