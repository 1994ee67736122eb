package index

// Log attribute keys of package index.
const (
	logComponent = "component"
	keyActive    = "active"
	keyChanged   = "changed"
	keyDropped   = "dropped"
	keyErr       = "err"
	keyModel     = "model"
	keyNotes     = "notes"
	keyPath      = "path"
	keyPattern   = "pattern"
	keyProblem   = "problem"
	keyReason    = "reason"
)
