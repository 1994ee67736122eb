package index

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/vault"
)

// A note's link text is what the notes linking to it say there: each
// linking note's title and the context of its link (markdown.Link.Context).
// It is the links field of the note's full-text rows, so a note is found by
// the words others use for it: a plugin by the person note that lists it, a
// guide by the map of content that files it under a topic.
//
// An open note's link text holds only open notes' words, whatever links to
// it: its rows are searched by requests that may use the web, and a
// personal note's words must never find an open chunk. A personal note may
// carry any note's words, since only requests that see every note see it.

// linkTextBytes bounds a note's link text: a note that hundreds of notes
// link to (a newsletter's subject, a core plugin) would otherwise carry a
// field many times its body, and BM25 normalises a match by the row's
// whole length.
const linkTextBytes = 2000

// linkText is the link text docID should carry: the contexts of the
// resolved links into it from other notes its sensitivity allows, by the
// linking note's path, each "title: context" once, cut at the last whole
// context within linkTextBytes.
func linkText(ctx context.Context, q rowQuerier, docID string) (string, error) {
	type from struct{ title, context string }
	rows, err := queryAll(ctx, q, func(f *from) []any { return []any{&f.title, &f.context} }, `SELECT s.title, e.context
		FROM edges e JOIN docs s ON s.doc_id = e.src JOIN docs t ON t.doc_id = e.dst
		WHERE e.dst = ? AND e.kind != 'tag' AND e.src != e.dst AND (t.sensitivity = 'personal' OR s.sensitivity = 'open')
		ORDER BY s.path, e.kind, e.target`, docID)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	seen := map[from]bool{}
	for _, r := range rows {
		if seen[r] {
			continue
		}
		seen[r] = true
		line := r.title + ": " + r.context + "\n"
		if b.Len()+len(line) > linkTextBytes {
			break
		}
		b.WriteString(line)
	}
	return b.String(), nil
}

// refreshLinkText recomputes the link text of every note the transaction
// marked (w.linked) and rewrites it where it changed; the full-text rows of
// its chunks follow by trigger. Vectors are not touched: link text is
// searched, never embedded. A note is marked when a link into it may have
// appeared, gone, changed context or resolution, or when it or a note
// linking to it changed sensitivity.
func (w *applier) refreshLinkText(ctx context.Context) error {
	for _, id := range slices.Sorted(maps.Keys(w.linked)) {
		text, err := linkText(ctx, w.q, id)
		if err != nil {
			return err
		}
		if _, err := w.q.ExecContext(ctx, `UPDATE docs SET link_text = ? WHERE doc_id = ? AND link_text != ?`, text, id, text); err != nil {
			return err
		}
	}
	clear(w.linked)
	return nil
}

// linkTextMeta records that every edge has its context and every note its
// link text: done once for an index built before links had contexts.
const linkTextMeta = "link_text"

// ensureLinkText fills in, once, the link contexts of an index whose edges
// were written without them: each note's links are read again from its
// text (notes indexed before the index kept texts keep empty contexts until
// they are written again), then every note's link text is computed. Nothing
// is re-chunked or re-embedded.
func (s *Store) ensureLinkText(ctx context.Context) error {
	if _, done, err := getMeta(ctx, s.writer, linkTextMeta); err != nil || done {
		return err
	}
	return s.write(ctx, "link text", func(tx *writeTx) error {
		type note struct{ id, path, text string }
		notes, err := queryAll(ctx, tx, func(n *note) []any { return []any{&n.id, &n.path, &n.text} }, `SELECT doc_id, path, text FROM docs WHERE text IS NOT NULL`)
		if err != nil {
			return err
		}
		w := newApplier(s, tx)
		for _, n := range notes {
			for _, l := range markdown.Parse(n.path, []byte(n.text), s.frontmatterKey).Links {
				key := strings.ToLower(vault.NormalizeTarget(l.Target))
				if key == "" || l.Context == "" {
					continue
				}
				if _, err := w.q.ExecContext(ctx, `UPDATE edges SET context = ? WHERE src = ? AND kind = ? AND target = ? AND context = ''`, l.Context, n.id, l.Kind, key); err != nil {
					return fmt.Errorf("%s: %w", n.path, err)
				}
			}
		}
		ids, err := queryAll(ctx, tx, one[string], `SELECT doc_id FROM docs`)
		if err != nil {
			return err
		}
		for _, id := range ids {
			w.linked[id] = true
		}
		if err := w.refreshLinkText(ctx); err != nil {
			return err
		}
		return setMeta(ctx, tx, linkTextMeta, "1")
	})
}
