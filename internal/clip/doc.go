// Package clip shortens text to a number of runes: the one way the module
// cuts text (rag a passage or a line of a prompt, its web searchers a title
// or a snippet, eval a question for a table cell), so that a cut never
// splits a character and always shows. It imports nothing
// of the module.
package clip
