// Package smallvault is the small indexed vault the HTTP surface's tests
// (transport, transport/mcp) read: a few open notes, personal notes that
// match every question better, a topic note collecting both kinds, and on
// request more personal notes than any page a read returns. It writes a
// real index in the test's temporary directory. It imports index and
// vault.
package smallvault
