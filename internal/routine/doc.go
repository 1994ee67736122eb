// Package routine owns the one goroutine of a long-running component (the
// feed's followers, the index's vectorizer): Start runs a function in it
// until the function returns or Close cancels it, and Close waits for it and
// returns its error, so that every goroutine has an owner that stops it.
//
// It imports no package of this module.
package routine
