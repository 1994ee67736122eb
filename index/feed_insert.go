package index

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/vault"
)

// insert writes a note new to the index, or whose old rows upsert removed:
// its row, aliases, chunks, links and tags.
func (w *applier) insert(ctx context.Context, docID, hash string, n vault.NoteInput) error {
	note := markdown.Parse(n.Path, []byte(n.Text), w.s.frontmatterKey)
	sens := w.s.classifier.classify(n.Path, note.Sensitivity)
	topics, err := w.insertDoc(ctx, docID, hash, n, note, sens)
	if err != nil {
		return err
	}
	w.warnParse(n.Path, note)
	w.affected[noteName(n.Path)] = true
	// Aliases before chunks: a chunk's full-text row takes its note's
	// aliases when it is inserted.
	if err := w.insertAliases(ctx, docID, note.Aliases); err != nil {
		return err
	}
	for _, c := range note.Chunks(w.s.chunking) {
		id := markdown.ChunkID(docID, c.HeadingPath, c.Ordinal)
		if _, err := w.q.ExecContext(ctx, `INSERT INTO chunks(chunk_id, doc_id, ordinal, heading_path, prelude, body, sensitivity) VALUES (?, ?, ?, ?, ?, ?, ?)`, id, docID, c.Ordinal, c.HeadingPath, preludeOf(note.Title, n.Path, c.HeadingPath, topics), c.Body, sens); err != nil {
			return fmt.Errorf("insert chunk %d: %w", c.Ordinal, err)
		}
	}
	if err := w.insertLinks(ctx, docID, note.Links); err != nil {
		return err
	}
	return w.insertTags(ctx, docID, note.Tags)
}

// insertDoc writes the note's row and returns the topics it keeps.
func (w *applier) insertDoc(ctx context.Context, docID, hash string, n vault.NoteInput, note markdown.Note, sens string) (topics string, err error) {
	fm, err := json.Marshal(jsonSafe(note.Frontmatter))
	if err != nil || note.Frontmatter == nil {
		// Frontmatter JSON is informational (YAML allows values JSON cannot
		// hold, such as .nan); the note itself must still be indexed.
		fm = []byte("{}")
	}
	// Keep topics already known for this note (from topic notes indexed
	// earlier) so its prelude is right without waiting for refreshTopics.
	_ = w.q.QueryRowContext(ctx, `SELECT topics FROM docs WHERE doc_id = ?`, docID).Scan(&topics)
	_, err = w.q.ExecContext(ctx, `INSERT INTO docs(doc_id, path, name, source_id, title, rev, content_hash, sensitivity, sensitivity_override, topics, mtime, frontmatter, indexed_at, text, plain_text, sensitivity_problem, sensitivity_ignored)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(doc_id) DO UPDATE SET path = excluded.path, name = excluded.name, source_id = excluded.source_id,
			title = excluded.title, rev = excluded.rev, content_hash = excluded.content_hash, sensitivity = excluded.sensitivity,
			sensitivity_override = excluded.sensitivity_override, mtime = excluded.mtime, frontmatter = excluded.frontmatter,
			indexed_at = excluded.indexed_at, text = excluded.text, plain_text = excluded.plain_text,
			sensitivity_problem = excluded.sensitivity_problem, sensitivity_ignored = excluded.sensitivity_ignored`,
		docID, n.Path, noteName(n.Path), n.SourceID, note.Title, n.Rev, hash, sens, note.Sensitivity, topics,
		n.MTime.UnixMilli(), string(fm), time.Now().UnixMilli(), n.Text, note.PlainText, note.SensitivityProblem, note.SensitivityIgnored)
	if err != nil {
		return "", fmt.Errorf("insert doc: %w", err)
	}
	return topics, nil
}

// warnParse logs what the parser could not read as written.
func (w *applier) warnParse(path string, note markdown.Note) {
	if note.PlainText != "" {
		w.s.log.Warn("note indexed as plain text: its markdown is beyond what the parser handles in bounded time", keyPath, path, keyReason, note.PlainText)
	}
	if note.SensitivityProblem != "" {
		w.s.log.Warn("note made personal: its frontmatter's sensitivity override is malformed", keyPath, path, keyProblem, note.SensitivityProblem)
	}
	if note.SensitivityIgnored != "" {
		w.s.log.Warn("sensitivity override ignored: Obsidian reads the note's frontmatter as text", keyPath, path, keyProblem, note.SensitivityIgnored)
	}
}

func (w *applier) insertAliases(ctx context.Context, docID string, aliases []string) error {
	for _, a := range aliases {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == "" {
			continue
		}
		if _, err := w.q.ExecContext(ctx, `INSERT OR IGNORE INTO aliases(doc_id, alias) VALUES (?, ?)`, docID, a); err != nil {
			return fmt.Errorf("insert alias: %w", err)
		}
		w.affected[a] = true
	}
	return nil
}

// insertLinks writes the note's outgoing links, each resolved now, and
// marks the notes whose link text they change.
func (w *applier) insertLinks(ctx context.Context, docID string, links []markdown.Link) error {
	for _, l := range links {
		key := strings.ToLower(vault.NormalizeTarget(l.Target))
		if key == "" {
			continue // [[#heading]] points into the note itself
		}
		dst, err := w.resolve(ctx, key)
		if err != nil {
			return err
		}
		if err := insertEdge(ctx, w.q, docID, l.Kind, key, dst, l.Context); err != nil {
			return err
		}
		if dst != "" {
			w.linked[dst] = true
		}
	}
	// The note's own link text is recomputed: its sensitivity decides whose
	// words it may carry.
	w.linked[docID] = true
	return nil
}

func (w *applier) insertTags(ctx context.Context, docID string, tags []string) error {
	for _, t := range tags {
		tag := strings.ToLower(t)
		if _, err := w.q.ExecContext(ctx, `INSERT OR IGNORE INTO edges(src, dst, kind, target, target_name, resolved) VALUES (?, ?, 'tag', ?, ?, 1)`, docID, "#"+tag, tag, tag); err != nil {
			return fmt.Errorf("insert tag: %w", err)
		}
	}
	return nil
}

// jsonSafe converts YAML-decoded values (which may hold map[any]any or
// time.Time) into values encoding/json accepts.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = jsonSafe(val)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[fmt.Sprint(k)] = jsonSafe(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = jsonSafe(val)
		}
		return out
	case time.Time:
		return x.Format(time.RFC3339)
	default:
		return x
	}
}
