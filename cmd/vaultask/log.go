package main

// Log attribute keys of the vaultask command.
const (
	keyAfter    = "after"
	keyEmbedded = "embedded"
	keyErr      = "err"
	keyFile     = "file"
	keyIndex    = "index"
	keyModel    = "model"
	keySource   = "source"
	keyWithin   = "within"
)
