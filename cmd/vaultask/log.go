package main

// Log attribute keys of the vaultask command.
const (
	keyAfter    = "after"
	keyEmbedded = "embedded"
	keyErr      = "err"
	keyFile     = "file"
	keyIndex    = "index"
	keyLeft     = "left"
	keyModel    = "model"
	keyOf       = "of"
	keyRate     = "rate"
	keySource   = "source"
	keyTook     = "took"
	keyWithin   = "within"
)
