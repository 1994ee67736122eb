package feed

import (
	"fmt"

	"github.com/bmatcuk/doublestar/v4"
)

// Corpus selects which vault paths are indexed: a path is included when it
// matches an Include glob and no Exclude glob (doublestar, case-sensitive).
type Corpus struct {
	Include []string
	Exclude []string
}

// Match reports whether path belongs to the corpus.
func (c Corpus) Match(path string) bool { return c.Excluded(path) == "" }

// Excluded says why path is not in the corpus, "" when it is.
func (c Corpus) Excluded(path string) string {
	in := false
	for _, p := range c.Include {
		if ok, _ := doublestar.Match(p, path); ok {
			in = true
			break
		}
	}
	if !in {
		return fmt.Sprintf("outside the corpus: matches none of the include globs %q", c.Include)
	}
	for _, p := range c.Exclude {
		if ok, _ := doublestar.Match(p, path); ok {
			return fmt.Sprintf("outside the corpus: excluded by the glob %q", p)
		}
	}
	return ""
}
