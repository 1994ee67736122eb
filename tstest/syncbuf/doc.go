// Package syncbuf is a bytes buffer safe for concurrent writers and readers:
// a child process's output, written by os/exec's goroutines while a test or
// the benchmarks read it. It imports nothing from the module.
package syncbuf
