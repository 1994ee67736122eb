package index

// Log attribute keys of package index.
const (
	logComponent = "component"
	keyChanged   = "changed"
	keyErr       = "err"
	keyNotes     = "notes"
	keyPath      = "path"
	keyPattern   = "pattern"
	keyProblem   = "problem"
	keyReason    = "reason"
)
