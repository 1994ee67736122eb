package rag

// Log attribute keys of package rag.
const (
	logComponent = "component"
	keyCount     = "count"
	keyErr       = "err"
)
