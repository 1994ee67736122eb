package index

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/bmatcuk/doublestar/v4"
)

// Sensitivity values. Every note and chunk is one of these.
const (
	SensitivityOpen     = "open"
	SensitivityPersonal = "personal"
)

// Classifier decides a note's sensitivity: personal when its real path
// matches one of PersonalPaths (doublestar globs, case-sensitive), unless the
// note's frontmatter overrides it either way.
type Classifier struct {
	PersonalPaths []string
}

// Validate reports the first malformed pattern.
func (c Classifier) Validate() error {
	for _, p := range c.PersonalPaths {
		if !doublestar.ValidatePattern(p) {
			return fmt.Errorf("invalid personal path glob %q", p)
		}
	}
	return nil
}

// Classify returns SensitivityOpen or SensitivityPersonal for a note at path (real case) whose
// frontmatter override is override ("", SensitivityOpen or SensitivityPersonal).
func (c Classifier) Classify(path, override string) string {
	if override == SensitivityOpen || override == SensitivityPersonal {
		return override
	}
	if c.matchedBy(path) != "" {
		return SensitivityPersonal
	}
	return SensitivityOpen
}

// matchedBy returns the first personal pattern that matches path, or "".
func (c Classifier) matchedBy(path string) string {
	for _, p := range c.PersonalPaths {
		if ok, _ := doublestar.Match(p, path); ok {
			return p
		}
	}
	return ""
}

// Corpus selects which vault paths are indexed: a path is included when it
// matches an Include glob and no Exclude glob (doublestar, case-sensitive).
type Corpus struct {
	Include []string
	Exclude []string
}

// Match reports whether path belongs to the corpus.
func (c Corpus) Match(path string) bool { return c.Excluded(path) == "" }

// Excluded says why path is not in the corpus, "" when it is.
func (c Corpus) Excluded(path string) string {
	in := false
	for _, p := range c.Include {
		if ok, _ := doublestar.Match(p, path); ok {
			in = true
			break
		}
	}
	if !in {
		return fmt.Sprintf("outside the corpus: matches none of the include globs %q", c.Include)
	}
	for _, p := range c.Exclude {
		if ok, _ := doublestar.Match(p, path); ok {
			return fmt.Sprintf("outside the corpus: excluded by the glob %q", p)
		}
	}
	return ""
}

// Reclassified is what Reclassify changed.
type Reclassified struct {
	Paths []string // notes whose sensitivity changed
	// UnmatchedPatterns are personal_paths globs that match no note: most
	// likely a typo, since a pattern that protects nothing protects nothing.
	UnmatchedPatterns []string
}

// Reclassify reclassifies every note with the store's classifier as a plain
// UPDATE of docs, chunks and the vectors' metadata column: nothing is
// re-chunked or re-embedded. It logs a warning for every pattern that matches
// no note. With dryRun it reports what would change and writes nothing.
func (s *Store) Reclassify(ctx context.Context, dryRun bool) (Reclassified, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out Reclassified
	db := s.writer
	if dryRun {
		db = s.reader
	} else if db == nil {
		return out, ErrReadOnly
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return out, fmt.Errorf("recompute sensitivity: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT doc_id, path, sensitivity, sensitivity_override FROM docs ORDER BY doc_id`)
	if err != nil {
		return out, fmt.Errorf("recompute sensitivity: %w", err)
	}
	type change struct{ docID, path, sens string }
	var changes []change
	matched := map[string]bool{}
	for rows.Next() {
		var docID, path, cur, override string
		if err := rows.Scan(&docID, &path, &cur, &override); err != nil {
			rows.Close()
			return out, fmt.Errorf("recompute sensitivity: %w", err)
		}
		for _, p := range s.classifier.PersonalPaths {
			if !matched[p] {
				matched[p], _ = doublestar.Match(p, path)
			}
		}
		if want := s.classifier.Classify(path, override); want != cur {
			changes = append(changes, change{docID, path, want})
		}
	}
	if err := rows.Close(); err != nil {
		return out, fmt.Errorf("recompute sensitivity: %w", err)
	}
	for _, p := range s.classifier.PersonalPaths {
		if !matched[p] {
			out.UnmatchedPatterns = append(out.UnmatchedPatterns, p)
			s.log.Warn("personal_paths pattern matches no note", "pattern", p)
		}
	}
	for _, c := range changes {
		out.Paths = append(out.Paths, c.path)
		if dryRun {
			continue
		}
		stmts := []string{
			`UPDATE docs SET sensitivity = ? WHERE doc_id = ?`,
			`UPDATE chunks SET sensitivity = ? WHERE doc_id = ?`,
		}
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q, c.sens, c.docID); err != nil {
				return out, fmt.Errorf("reclassify %s: %w", c.path, err)
			}
		}
		if err := updateVectorSensitivity(ctx, tx, c.docID, c.sens); err != nil {
			return out, fmt.Errorf("reclassify %s: %w", c.path, err)
		}
	}
	if dryRun {
		return out, nil
	}
	// A topic note or a member that changed sides changes which topic
	// titles an open note may carry.
	w := &applier{s: s, tx: tx, ctx: ctx, affected: map[string]bool{}}
	if len(changes) > 0 {
		if err := w.refreshTopics(); err != nil {
			return out, fmt.Errorf("recompute sensitivity: topics: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return out, fmt.Errorf("recompute sensitivity: %w", err)
	}
	if w.preludesChanged {
		s.signalChanged()
	}
	return out, nil
}

func updateVectorSensitivity(ctx context.Context, tx *sql.Tx, docID, sens string) error {
	ids, err := embeddedRowIDs(ctx, tx, docID)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE chunks_vec SET sensitivity = ? WHERE rowid = ?`, sens, id); err != nil {
			return err
		}
	}
	return nil
}
