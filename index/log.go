package index

// Log attribute keys of package index.
const (
	logComponent = "component"
	keyChanged   = "changed"
	keyDeadSlots = "dead_slots"
	keyErr       = "err"
	keyLive      = "live"
	keyNotes     = "notes"
	keyPath      = "path"
	keyPattern   = "pattern"
	keyProblem   = "problem"
	keyReason    = "reason"
)
