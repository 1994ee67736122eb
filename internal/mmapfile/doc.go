// Package mmapfile maps a model file read-only into memory (a plain read
// where the platform has no mmap), for the built-in encoders (llm/e5,
// llm/bge), whose large embedding tables then stay in the page cache
// rather than on the heap.
//
// It imports nothing from this module.
package mmapfile

import "errors"

// ErrEmpty is wrapped by Map for a file of no bytes, which cannot be mapped.
var ErrEmpty = errors.New("file is empty")
