package bench

// Log attribute keys of package bench.
const (
	keyChunks   = "chunks"
	keyEdits    = "edits"
	keyErr      = "err"
	keyFile     = "file"
	keyID       = "id"
	keyIndex    = "index"
	keyLoad     = "load"
	keyMode     = "mode"
	keyModel    = "model"
	keyNotes    = "notes"
	keyOf       = "of"
	keyPassages = "passages"
	keyRun      = "run"
	keySection  = "section"
	keySize     = "size"
	keyTitle    = "title"
	keyWhat     = "what"
	keyWhy      = "why"
)
