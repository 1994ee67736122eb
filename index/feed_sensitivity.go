package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/index/vectorset"
	"github.com/vaultask/vaultask/vault"
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

// classify returns SensitivityOpen or SensitivityPersonal for a note at path (real case) whose
// frontmatter override is override ("", SensitivityOpen or SensitivityPersonal).
func (c Classifier) classify(path, override string) string {
	if override == vault.SensitivityOpen || override == vault.SensitivityPersonal {
		return override
	}
	if c.matchedBy(path) != "" {
		return vault.SensitivityPersonal
	}
	return vault.SensitivityOpen
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

// Reclassified is what Reclassify changed.
type Reclassified struct {
	Paths []string // notes whose sensitivity changed
	// UnmatchedPatterns are personal_paths globs that match no note: most
	// likely a typo, since a pattern that protects nothing protects nothing.
	UnmatchedPatterns []string
}

// Reclassify reclassifies every note with the store's classifier as a plain
// UPDATE of docs and chunks: nothing is re-chunked or re-embedded. It logs a
// warning for every pattern that matches no note. With dryRun it reports
// what would change and writes nothing.
func (f *Feed) Reclassify(ctx context.Context, dryRun bool) (Reclassified, error) {
	var out Reclassified
	var w *applier
	const what = "recompute sensitivity"
	var err error
	if dryRun {
		err = f.db.read(ctx, what, func(tx *sql.Tx) error {
			_, err := f.db.reclassifications(ctx, tx, &out)
			return err
		})
	} else {
		err = f.db.write(ctx, what, func(tx *writeTx) error {
			changes, err := f.db.reclassifications(ctx, tx.Tx, &out)
			if err != nil || len(changes) == 0 {
				return err
			}
			w = newApplier(f.db, tx)
			return w.reclassify(ctx, tx.Tx, changes)
		})
	}
	if err != nil {
		return out, err
	}
	if w != nil && w.preludesChanged {
		f.db.signalChanged()
	}
	return out, nil
}

// reclassification is a note whose sensitivity the classifier changes.
type reclassification struct{ docID, path, sens string }

// reclassifications classifies every note again and lists those whose
// sensitivity changes; it fills out's paths and the patterns that match no
// note, warning of each.
func (s *Store) reclassifications(ctx context.Context, tx *sql.Tx, out *Reclassified) ([]reclassification, error) {
	type row struct{ docID, path, cur, override string }
	rows, err := queryAll(ctx, tx, func(r *row) []any { return []any{&r.docID, &r.path, &r.cur, &r.override} },
		`SELECT doc_id, path, sensitivity, sensitivity_override FROM docs ORDER BY doc_id`)
	if err != nil {
		return nil, err
	}
	var changes []reclassification
	matched := map[string]bool{}
	for _, r := range rows {
		for _, p := range s.classifier.PersonalPaths {
			if !matched[p] {
				matched[p], _ = doublestar.Match(p, r.path)
			}
		}
		if want := s.classifier.classify(r.path, r.override); want != r.cur {
			changes = append(changes, reclassification{r.docID, r.path, want})
			out.Paths = append(out.Paths, r.path)
		}
	}
	for _, p := range s.classifier.PersonalPaths {
		if !matched[p] {
			out.UnmatchedPatterns = append(out.UnmatchedPatterns, p)
			s.log.Warn("personal_paths pattern matches no note", keyPattern, p)
		}
	}
	return changes, nil
}

// reclassify writes each note's new sensitivity to its row and its chunks,
// and for the vector sets, then recomputes what depends on it.
func (w *applier) reclassify(ctx context.Context, tx *sql.Tx, changes []reclassification) error {
	for _, c := range changes {
		// A note that changed sides changes whose words its link text may
		// carry, and whether its own words may be in its targets'.
		w.linked[c.docID] = true
		if err := w.markTargets(ctx, c.docID); err != nil {
			return fmt.Errorf("reclassify %s: %w", c.path, err)
		}
		for _, q := range []string{
			`UPDATE docs SET sensitivity = ? WHERE doc_id = ?`,
			`UPDATE chunks SET sensitivity = ? WHERE doc_id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, c.sens, c.docID); err != nil {
				return fmt.Errorf("reclassify %s: %w", c.path, err)
			}
		}
		if err := w.vectorsSensitivity(ctx, c.docID, c.sens == vault.SensitivityOpen); err != nil {
			return fmt.Errorf("reclassify %s: %w", c.path, err)
		}
	}
	// A topic note or a member that changed sides changes which topic
	// titles an open note may carry.
	if err := w.refreshTopics(ctx); err != nil {
		return fmt.Errorf("topics: %w", err)
	}
	if err := w.refreshLinkText(ctx); err != nil {
		return fmt.Errorf("link text: %w", err)
	}
	return nil
}

// errClassificationStale is a reader's Open of an index classified with
// other sensitivity settings, which it cannot reclassify: answering from it
// could show a note now personal to a request that may use the web.
var errClassificationStale = errors.New("index classified with other sensitivity settings")

// classification is what decides a note's sensitivity: the personal globs
// and the frontmatter key. The index records it; an index opened with
// another is reclassified before it answers or follows.
type classification struct {
	PersonalPaths  []string `json:"personal_paths"`
	FrontmatterKey string   `json:"frontmatter_key"`
}

func (s *Store) classification() classification {
	return classification{PersonalPaths: slices.Sorted(slices.Values(s.classifier.PersonalPaths)), FrontmatterKey: s.frontmatterKey}
}

func storedClassification(ctx context.Context, q querier) (classification, bool, error) {
	var c classification
	raw, ok, err := getMeta(ctx, q, "classification")
	if err != nil || !ok {
		return c, false, err
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return c, false, fmt.Errorf("read meta classification: %w", err)
	}
	return c, true, nil
}

func (c classification) equal(o classification) bool {
	return c.FrontmatterKey == o.FrontmatterKey && slices.Equal(c.PersonalPaths, o.PersonalPaths)
}

// ensureClassification reclassifies every note when the index was last
// classified with other settings: each note's frontmatter override is read
// again from its text under the frontmatter key, then every note's
// sensitivity recomputed, as a plain UPDATE. A fresh index just records the
// settings.
func (s *Store) ensureClassification(ctx context.Context) error {
	was, known, err := storedClassification(ctx, s.writer)
	if err != nil {
		return err
	}
	now := s.classification()
	if known && was.equal(now) {
		return nil
	}
	var notes int
	if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM docs`).Scan(&notes); err != nil {
		return fmt.Errorf("reclassify: %w", err)
	}
	if notes > 0 {
		if !known || was.FrontmatterKey != now.FrontmatterKey {
			if err := s.rereadOverrides(ctx); err != nil {
				return err
			}
		}
		res, err := s.Feed().Reclassify(ctx, false)
		if err != nil {
			return err
		}
		s.log.Info("the sensitivity settings differ from the ones this index was classified with: reclassified it before use",
			keyNotes, notes, keyChanged, len(res.Paths))
	}
	raw, err := json.Marshal(now)
	if err != nil {
		return err
	}
	return s.write(ctx, "record classification", func(tx *writeTx) error { return setMeta(ctx, tx, "classification", string(raw)) })
}

// rereadOverrides reads each note's frontmatter override again, under the
// store's frontmatter key, from the note's text. A note indexed before the
// index kept whole texts keeps its override until it is written again.
func (s *Store) rereadOverrides(ctx context.Context) error {
	return s.write(ctx, "reread frontmatter overrides", func(tx *writeTx) error {
		type note struct{ id, text string }
		notes, err := queryAll(ctx, tx, func(n *note) []any { return []any{&n.id, &n.text} }, `SELECT doc_id, text FROM docs WHERE text IS NOT NULL`)
		if err != nil {
			return err
		}
		for _, n := range notes {
			value, problem, ignored := markdown.Sensitivity([]byte(n.text), s.frontmatterKey)
			if _, err := tx.ExecContext(ctx, `UPDATE docs SET sensitivity_override = ?, sensitivity_problem = ?, sensitivity_ignored = ? WHERE doc_id = ?`,
				value, problem, ignored, n.id); err != nil {
				return err
			}
		}
		return nil
	})
}

// reclassifyFirst makes a reader's index classified with the reader's
// settings, by opening a writer for that alone; it fails with
// errClassificationStale when it cannot (another process holds the index for
// writing, under other settings, or the file is read-only).
func (s *Store) reclassifyFirst(ctx context.Context, opts Options) error {
	was, known, err := storedClassification(ctx, s.reader)
	if err != nil || (known && was.equal(s.classification())) {
		return err
	}
	st, err := readSpaces(ctx, s.reader)
	if err != nil {
		return err
	}
	// The writer reclassifies and nothing else: it keeps the space the index
	// embeds into, whatever model this command names (a reader's other model
	// must not start, or undo, a re-embedding).
	if target := st.target(); target.id != 0 {
		opts.Space = target.space
	}
	opts.ReadOnly, opts.Rebuild = false, false
	w, err := Open(ctx, opts)
	if err != nil {
		return fmt.Errorf("%w: the index at %s was classified with other personal paths or another frontmatter key than this command's, and reclassifying it failed: %w", errClassificationStale, s.path, err)
	}
	return w.Close()
}

// vectorsSensitivity records that the chunks of note docID with a vector,
// in any space, are now open or not: the vector sets filter on it.
func (w *applier) vectorsSensitivity(ctx context.Context, docID string, open bool) error {
	type held struct{ space, chunk int64 }
	vs, err := queryAll(ctx, w.q, func(h *held) []any { return []any{&h.space, &h.chunk} },
		`SELECT v.space, v.chunk FROM vectors v
		WHERE v.space IN (SELECT id FROM spaces) AND v.chunk IN (SELECT rowid FROM chunks WHERE doc_id = ?)`, docID)
	if err != nil {
		return err
	}
	for _, v := range vs {
		w.tx.recordVector(spaceChange{v.space, vectorset.Change{ID: v.chunk, Open: open}})
	}
	return nil
}
