package transport

// Log attribute keys of package transport.
const (
	logComponent = "component"
	keyErr       = "err"
	keyFile      = "file"
	keyKeys      = "keys"
	keyPanic     = "panic"
	keyPath      = "path"
)
