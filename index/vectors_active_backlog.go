package index

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/vaultask/vaultask/index/vectorset"
	"github.com/vaultask/vaultask/vault"
)

// While the index re-embeds into a new space, searches use the active one
// until the switch (vectors_spaces.go), and the backlog fills the new one: a
// note written meanwhile would have a vector in neither for as long as the
// re-embedding lasts (the new space reaches it last), found by full text
// alone. ActiveBacklog and PutActiveVectors give it its vector in the
// active space too, with the old model, when the caller has it.

// ActiveBacklog returns the chunks written since the index began
// re-embedding that have no vector in the active space, with that space:
// whole notes, oldest change first, up to maxChunks chunks (a larger note
// alone, whole), as PutActiveVectors takes them. It returns nothing while no
// space is being filled. Chunks written since are those past the last chunk
// with a vector there: chunk rowids only grow, an edit rewrites all of a
// note's chunks, and an index whose active space holds no vector at all
// has nothing to catch up with in it.
func (v *Vectors) ActiveBacklog(ctx context.Context, maxChunks int) (vault.EmbeddingSpace, []Pending, error) {
	if maxChunks <= 0 || v.db.spaces().filling.id == 0 {
		return vault.EmbeddingSpace{}, nil, nil
	}
	var space vault.EmbeddingSpace
	var out []Pending
	err := v.db.read(ctx, "read the active space's backlog", func(tx *sql.Tx) error {
		st, err := readSpaces(ctx, tx)
		if err != nil || st.filling.id == 0 {
			return err
		}
		space = st.active.space
		type missing struct {
			docID string
			rowid int64
		}
		chunks, err := queryAll(ctx, tx, func(m *missing) []any { return []any{&m.docID, &m.rowid} },
			`SELECT c.doc_id, c.rowid FROM chunks c
			WHERE c.rowid > (SELECT max(chunk) FROM vectors WHERE space = ?1)
			AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.space = ?1 AND v.chunk = c.rowid)
			ORDER BY c.rowid`, st.active.id)
		if err != nil {
			return err
		}
		size := map[string]int{}
		var notes []string
		for _, c := range chunks {
			if size[c.docID] == 0 {
				notes = append(notes, c.docID)
			}
			size[c.docID]++
		}
		taken := 0
		for _, docID := range notes {
			if taken > 0 && taken+size[docID] > maxChunks {
				break
			}
			taken += size[docID]
			type row struct {
				Pending
				prelude, body string
			}
			rows, err := queryAll(ctx, tx, func(r *row) []any { return []any{&r.RowID, &r.prelude, &r.body, &r.Open} },
				`SELECT c.rowid, c.prelude, c.body, c.sensitivity = 'open' FROM chunks c
				WHERE c.doc_id = ? AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.space = ? AND v.chunk = c.rowid)
				ORDER BY c.rowid`, docID, st.active.id)
			if err != nil {
				return err
			}
			for _, r := range rows {
				r.DocID, r.Text = docID, embedText(r.prelude, r.body)
				out = append(out, r.Pending)
			}
		}
		return nil
	})
	return space, out, err
}

// PutActiveVectors stores vectors of space, the active space, for chunks
// ActiveBacklog returned, in one transaction, and returns how many it
// took. A note's vectors go in together or not at all: a note with a chunk
// that is still without a vector there and not among vs, or whose text
// changed since, is left for the next ActiveBacklog. Nothing is stored once
// the index switched spaces, or went back to space alone: the vectors
// would not be searched, or the backlog holds those chunks already.
func (v *Vectors) PutActiveVectors(ctx context.Context, space vault.EmbeddingSpace, vs []Vector) (int, error) {
	taken := 0
	err := v.db.writeVectors(ctx, "put vectors in the active space", func(tx *writeTx) error {
		st, err := readSpaces(ctx, tx)
		if err != nil || st.filling.id == 0 || st.active.space != space {
			return err
		}
		byNote := map[string][]Vector{}
		var notes []string
		open := map[int64]bool{}
		for _, vec := range vs {
			if len(vec.Embedding) != space.Dim {
				return fmt.Errorf("chunk %d has %d dimensions, the active space is %s", vec.RowID, len(vec.Embedding), space)
			}
			var docID, prelude, body string
			var isOpen bool
			err := tx.QueryRowContext(ctx, `SELECT doc_id, prelude, body, sensitivity = 'open' FROM chunks WHERE rowid = ?`, vec.RowID).Scan(&docID, &prelude, &body, &isOpen)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("chunk %d: %w", vec.RowID, err)
			}
			if embedText(prelude, body) != vec.Text {
				continue
			}
			if byNote[docID] == nil {
				notes = append(notes, docID)
			}
			byNote[docID] = append(byNote[docID], vec)
			open[vec.RowID] = isOpen
		}
		for _, docID := range notes {
			without, err := queryAll(ctx, tx, one[int64], `SELECT c.rowid FROM chunks c WHERE c.doc_id = ?
				AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.space = ? AND v.chunk = c.rowid) ORDER BY c.rowid`, docID, st.active.id)
			if err != nil {
				return fmt.Errorf("%s: %w", docID, err)
			}
			given := byNote[docID]
			slices.SortFunc(given, func(a, b Vector) int { return cmp.Compare(a.RowID, b.RowID) })
			if !slices.EqualFunc(without, given, func(id int64, vec Vector) bool { return id == vec.RowID }) {
				continue
			}
			for _, vec := range given {
				if _, err := tx.ExecContext(ctx, `INSERT INTO vectors(space, chunk, embedding) VALUES (?, ?, ?)`, st.active.id, vec.RowID, encodeVector(vec.Embedding)); err != nil {
					return fmt.Errorf("chunk %d: %w", vec.RowID, err)
				}
				tx.recordVector(spaceChange{st.active.id, vectorset.Change{ID: vec.RowID, Doc: docID, Vec: slices.Clone(vec.Embedding), Open: open[vec.RowID]}})
				taken++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return taken, nil
}
