package vault

import (
	"errors"
	"fmt"
	"strconv"
)

// EmbeddingSpace names a vector space: the model that embeds into it, the
// prefixes it puts before a question and before a passage, the vectors'
// dimension and, for a built-in model, its files. Vectors of two spaces
// are never comparable (a model given other prefixes places texts
// elsewhere, and so do other weights under the same name), so the index
// records the space of every vector it holds, and a query vector says
// which space it was embedded in.
type EmbeddingSpace struct {
	Model          string
	Dim            int
	QueryPrefix    string
	DocumentPrefix string
	// Files names a built-in model's files ("sha256:" and a digest of
	// their pinned sums); "" for a model behind a server, whose files
	// vaultask does not see.
	Files string
}

func (e EmbeddingSpace) String() string {
	s := fmt.Sprintf("%s (%d dimensions", e.Model, e.Dim)
	if e.QueryPrefix != "" || e.DocumentPrefix != "" {
		s += ", prefixes " + strconv.Quote(e.QueryPrefix) + " and " + strconv.Quote(e.DocumentPrefix)
	}
	if e.Files != "" {
		s += ", files " + e.Files[:min(len(e.Files), len("sha256:")+12)]
	}
	return s + ")"
}

// QueryVector is a question embedded for vector search, tagged with the
// space it was embedded in: the index compares it with that space's
// vectors only, and refuses a space it does not search (ErrOtherSpace).
// Values nil is no vector at all (no embedder of the space searched).
type QueryVector struct {
	Space  EmbeddingSpace
	Values []float32
}

// ErrOtherSpace is a query vector of another embedding space than the one
// the index searches: its distances to the index's vectors would mean
// nothing. It happens for one question when the index switches to a space
// it has finished re-embedding between the question's embedding and its
// search; the question is then answered by full text.
var ErrOtherSpace = errors.New("query vector of another embedding space")
