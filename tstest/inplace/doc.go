// Package inplace rewrites a file in place, as cp does, for the tests of a
// model file changed under a running model.
package inplace
