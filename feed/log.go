package feed

// Log attribute keys of package feed.
const (
	logComponent  = "component"
	keyDB         = "db"
	keyID         = "id"
	keyPath       = "path"
	keyRev        = "rev"
	keySeq        = "seq"
	keyErr        = "err"
	keyReason     = "reason"
	keyCount      = "count"
	keyTotal      = "total"
	keyWait       = "wait"
	keyElapsed    = "elapsed"
	keyVersion    = "version"
	keyKnown      = "known"
	keyAdded      = "added"
	keyChanged    = "changed"
	keyRemoved    = "removed"
	keyIncomplete = "incomplete"
	keyWas        = "was"
	keyNow        = "now"
	keyUpdateSeq  = "update_seq"
)
