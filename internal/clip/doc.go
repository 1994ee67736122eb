// Package clip shortens text to a number of runes: the one way rag and its
// web searchers cut a passage, a title, a snippet or a line of a prompt, so
// that a cut never splits a character and always shows. It imports nothing
// of the module.
package clip
