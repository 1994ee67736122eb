// Package lowprio runs work on a fixed set of goroutines, each locked to an
// operating-system thread of the lowest scheduling priority (nice 19 on
// Linux), so that the work uses only the CPU nothing else wants: the
// built-in embedding model embeds the vault's chunks in the background on
// it, behind the index's writer, the questions being answered and the rest
// of a small server (CouchDB on the same NAS). Inside the process the Go
// scheduler still preempts it every few milliseconds for any goroutine that
// waits.
//
// It imports nothing from this module.
package lowprio
