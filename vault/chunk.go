package vault

// Chunk is one chunk found by a read, with what a caller needs to show and
// cite it.
type Chunk struct {
	RowID       int64
	ChunkID     string
	DocID       string
	Path        string
	Title       string
	Ordinal     int
	HeadingPath string
	Prelude     string
	Body        string
	Sensitivity string
	// Embedded is set once the chunk's vector is in the index, so vector
	// search can find it.
	Embedded bool
	// Score is the read's own measure: BM25 (lower is better) for FTS,
	// cosine distance (lower is better) for vectors.
	Score float64
}

// Doc is a note as the graph and citation reads return it.
type Doc struct {
	DocID       string
	Path        string // vault path with its real case
	Title       string
	ContentHash string // identical text at two paths has one hash
	Sensitivity string
}

// Relation says how a neighbour is one hop from a note.
type Relation string

// The one-hop relations the index's Neighbours follows.
const (
	// RelationTopic is a topic note whose clippings link to the note.
	RelationTopic Relation = "topic"
	// RelationMember is a note the clippings of a topic note link to.
	RelationMember Relation = "member"
	// RelationSibling is another note clipped by one of the note's topic notes.
	RelationSibling Relation = "sibling"
	// RelationLink is a note the note links to.
	RelationLink Relation = "link"
	// RelationBacklink is a note that links to the note.
	RelationBacklink Relation = "backlink"
)

// Neighbour is a note one hop from the note From.
type Neighbour struct {
	From     string // doc id of the note the hop starts at
	Relation Relation
	Via      string // for a sibling, the doc id of the topic note both share
	Doc      Doc
}

// Hop is a note one hop from the note From, by doc id alone: what graph
// expansion walks before it reads a note.
type Hop struct {
	From     string // doc id of the note the hop starts at
	Relation Relation
	Via      string // for a sibling, the doc id of the topic note both share
	To       string // doc id of the note reached
}

// Topic is a topic note and how many notes its clippings region links to.
type Topic struct {
	Doc
	Members int
}

// FieldWeights weigh a full-text match by the field of the chunk's row it is
// in, as bm25's column weights: a chunk's note title, the note's aliases,
// the chunk's heading path, the note's path, its topics (the titles of the
// topic notes that clip it), the chunk's body, and the note's link text
// (what the notes linking to it say there). A field weighted 0 is not
// searched at all. The zero FieldWeights means DefaultFieldWeights.
type FieldWeights struct {
	Title, Aliases, Headings, Path, Topics, Body, Links float64
}

// DefaultFieldWeights are the full-text weights chosen on both question sets
// (reports/RETRIEVAL.md): the prelude's fields (title, headings, path, topics) at
// half the body's weight, as before the index had fields, and the link text
// at half too. Aliases are not searched: weighing them moved no question
// one way more than the other.
var DefaultFieldWeights = FieldWeights{Title: 0.5, Headings: 0.5, Path: 0.5, Topics: 0.5, Body: 1, Links: 0.5}

// DistanceBounds bound the cosine distance from a query to a note's chunk
// nearest it: Lo ≤ distance ≤ Hi. A note none of whose chunks has a vector
// has no distance and sorts after every note that has one: bounds for it,
// where given, are +Inf both.
type DistanceBounds struct {
	Lo, Hi float64
}
