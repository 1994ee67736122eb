// Package markdown parses one note's markdown: the YAML frontmatter (title,
// aliases, tags, the sensitivity override, which fails closed: an override
// that is there but wrong makes the note personal), the links (wikilinks,
// embeds, links to local .md files, and topic links inside the clippings
// regions of notes under "99 topics/"), the tags (frontmatter and inline)
// and the heading-aware chunks that are embedded and searched.
//
// Everything here is a pure function of its arguments: no I/O, no clock, no
// globals that change. Code blocks, code spans and headings are found with
// goldmark's CommonMark parser, so a [[link]] or #tag inside code is not one.
// A body on which goldmark would be slow (deep nesting, or markup that makes
// it do quadratic work) is never given to it: it is read as plain text, and
// Note.PlainText says why.
//
// It imports only vault (the sensitivity values and link-target
// normalisation it shares with the index); the index package stores what it
// returns.
package markdown
