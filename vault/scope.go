package vault

// Scope says which chunks a read may see. It is decided before retrieval and
// applied inside every query, so a filter can never come after the top-k.
//
// The zero value is ScopeOpen: a caller that forgets to decide sees open
// notes only, never a personal one.
type Scope int

const (
	// ScopeOpen sees open chunks only: any request that may use the web.
	ScopeOpen Scope = iota
	// ScopeAll sees open and personal chunks: vault-only answering.
	ScopeAll
)

// ScopeFor is the scope of a request: one that may use the web sees open
// notes only; one that may not sees the whole vault.
func ScopeFor(allowWeb bool) Scope {
	if allowWeb {
		return ScopeOpen
	}
	return ScopeAll
}

// String is the scope's name in traces, results and events: "all" for
// ScopeAll, "open" for anything else, so that no value names more than it
// sees.
func (s Scope) String() string {
	if s == ScopeAll {
		return "all"
	}
	return "open"
}

// OpenOnly reports whether s sees open chunks only: every value but
// ScopeAll, however it came to be, so that a malformed scope fails closed.
// The index's queries filter on it.
func (s Scope) OpenOnly() bool { return s != ScopeAll }
