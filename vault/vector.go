package vault

import "fmt"

// EmbeddingSpace names a vector space: the model that embeds into it and
// the vectors' dimension. Vectors of two spaces are never comparable, so
// the index records the space of every vector it holds, and a query vector
// says which space it was embedded in.
type EmbeddingSpace struct {
	Model string
	Dim   int
}

func (e EmbeddingSpace) String() string { return fmt.Sprintf("%s (%d dimensions)", e.Model, e.Dim) }

// QueryVector is a question embedded for vector search, tagged with the
// space it was embedded in: the index compares it with that space's
// vectors only, and refuses a space it does not hold. Values nil is no
// vector at all (the embedder was unavailable).
type QueryVector struct {
	Space  EmbeddingSpace
	Values []float32
}
