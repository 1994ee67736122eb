package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/vaultask/vaultask/index/vectorset"
)

// Changed delivers a signal after a write that put chunks on the embedding
// backlog. Signals coalesce: one pending signal stands for any number.
func (v *Vectors) Changed() <-chan struct{} { return v.db.changed }

// Pending is a chunk waiting for its vector: the text to embed is its
// prelude and body together, as it is searched.
type Pending struct {
	RowID int64
	DocID string
	Text  string
	// Open is set for a chunk of an open note, so that progress shown to
	// open-only listeners counts only what they may see.
	Open bool
}

// Vector is an embedding of Text for the chunk with RowID.
type Vector struct {
	RowID     int64
	Text      string // the Pending text that was embedded
	Embedding []float32
}

func embedText(prelude, body string) string { return prelude + "\n\n" + body }

// Backlog returns up to maxChunks chunks without a vector, in the order
// they should be embedded, handed out a turn at a time: a turn gives one
// note up to slice of its chunks. A note's turn counts from its chunks
// already staged (see PutVectors), so a restart resumes the same order:
// the notes none of whose chunks is embedded yet come first, then those in
// their first turn, then in their second, and so on, the note changed
// longest ago first among equals. A batch holds notes of the first of
// these tiers only, so a note written while a large one is being embedded
// is served alone in the next batch, never behind the rest of the large
// note's turn, and every waiting note gets its turn before any has a
// second one. The chunks come note by note in that order, so a prefix of
// them is a smaller batch in the same order (the vectorizer cuts a batch
// to the text its embedder gets through in its time).
func (v *Vectors) Backlog(ctx context.Context, maxChunks, slice int) ([]Pending, error) {
	if maxChunks <= 0 || slice <= 0 {
		return nil, nil
	}
	tx, err := v.db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read backlog: %w", err)
	}
	defer tx.Rollback()
	// A note's oldest chunk dates its change: chunk rowids only grow, and
	// an edit rewrites all of a note's chunks. Every note a batch reaches
	// takes at least one chunk, so the maxChunks notes first in line are
	// all it can reach.
	queue, err := queryAll(ctx, tx, func(q *waitingNote) []any { return []any{&q.docID, &q.waiting, &q.staged, &q.first} }, `
		WITH waiting AS (SELECT doc_id, count(*) AS n FROM chunks WHERE embedded = 0 AND staged IS NULL GROUP BY doc_id),
		queue AS (SELECT doc_id, n,
			(SELECT count(*) FROM chunks c WHERE c.doc_id = w.doc_id AND c.staged IS NOT NULL) AS staged,
			(SELECT min(rowid) FROM chunks c WHERE c.doc_id = w.doc_id) AS first FROM waiting w)
		SELECT doc_id, n, staged, first FROM queue
		ORDER BY CASE WHEN staged = 0 THEN 0 ELSE staged / ? + 1 END, first LIMIT ?`, slice, maxChunks)
	if err != nil {
		return nil, fmt.Errorf("read backlog: %w", err)
	}
	var out []Pending
	for _, t := range takeTurns(queue, maxChunks, slice) {
		rows, err := tx.QueryContext(ctx, `SELECT rowid, prelude, body, sensitivity = 'open' FROM chunks
			WHERE doc_id = ? AND embedded = 0 AND staged IS NULL ORDER BY rowid LIMIT ?`, t.docID, t.take)
		if err != nil {
			return nil, fmt.Errorf("read backlog: %w", err)
		}
		for rows.Next() {
			p := Pending{DocID: t.docID}
			var prelude, body string
			if err := rows.Scan(&p.RowID, &prelude, &body, &p.Open); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read backlog: %w", err)
			}
			p.Text = embedText(prelude, body)
			out = append(out, p)
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("read backlog: %w", err)
		}
	}
	return out, nil
}

// EmbeddingWaiting counts the chunks waiting to be embedded: the backlog
// without the chunks staged (embedded, waiting for the rest of their note).
// It reads one index, for progress shown while a backlog drains.
func (v *Vectors) EmbeddingWaiting(ctx context.Context) (int, error) {
	var n int
	if err := v.db.reader.QueryRowContext(ctx, `SELECT count(*) FROM chunks WHERE embedded = 0 AND staged IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the backlog: %w", err)
	}
	return n, nil
}

// waitingNote is a note on the backlog: how many of its chunks are staged
// and how many still wait for a vector.
type waitingNote struct {
	docID   string
	first   int64 // the rowid of its oldest chunk
	staged  int
	waiting int
	take    int // chunks this batch takes
}

// tier is the turn a note with staged chunks staged is in: 0 before its
// first chunk is embedded, then k while it has from (k−1)·slice (but at
// least one) to k·slice − 1 staged.
func tier(staged, slice int) int {
	if staged == 0 {
		return 0
	}
	return staged/slice + 1
}

// takeTurns deals out a batch of up to maxChunks chunks to queue, sorted
// by tier and age: each note of the first note's tier, in order, takes
// what is left of its turn (up to slice chunks), until the batch is full.
// It returns the notes that take chunks.
func takeTurns(queue []waitingNote, maxChunks, slice int) []waitingNote {
	if len(queue) == 0 {
		return nil
	}
	var taken []waitingNote
	first, left := tier(queue[0].staged, slice), maxChunks
	for _, q := range queue {
		if left == 0 || tier(q.staged, slice) != first {
			break
		}
		q.take = min(q.waiting, max(first, 1)*slice-q.staged, left)
		left -= q.take
		taken = append(taken, q)
	}
	return taken
}

// PutVectors stores vectors in one transaction and returns how many it
// took. A vector for a chunk that was deleted, re-written or already
// embedded since it was read from the backlog is dropped: a chunk's new text
// is queued again by its own Apply. A vector is staged until every chunk of
// its note has one; then the note's vectors are made searchable together.
func (v *Vectors) PutVectors(ctx context.Context, vs []Vector) (int, error) {
	taken := 0
	target := v.db.spaces().target()
	err := v.db.writeVectors(ctx, "put vectors", func(tx *writeTx) error {
		var notes []string
		seen := map[string]bool{}
		for _, vec := range vs {
			if len(vec.Embedding) != target.space.Dim {
				return fmt.Errorf("chunk %d has %d dimensions, the index embeds into %s", vec.RowID, len(vec.Embedding), target.space)
			}
			var docID, prelude, body string
			var embedded int
			var staged []byte
			err := tx.QueryRowContext(ctx, `SELECT doc_id, embedded, staged, prelude, body FROM chunks WHERE rowid = ?`, vec.RowID).Scan(&docID, &embedded, &staged, &prelude, &body)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("chunk %d: %w", vec.RowID, err)
			}
			if embedded == 1 || staged != nil || embedText(prelude, body) != vec.Text {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE chunks SET staged = ? WHERE rowid = ?`, encodeVector(vec.Embedding), vec.RowID); err != nil {
				return fmt.Errorf("chunk %d: %w", vec.RowID, err)
			}
			taken++
			if !seen[docID] {
				seen[docID] = true
				notes = append(notes, docID)
			}
		}
		for _, docID := range notes {
			if err := v.db.publishVectors(ctx, tx, target, docID); err != nil {
				return fmt.Errorf("%s: %w", docID, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return taken, nil
}

// publishVectors moves a note's staged vectors into the vectors of target,
// the space the index embeds into (see vectors_spaces.go), once none of its
// chunks waits for one any more.
func (s *Store) publishVectors(ctx context.Context, tx *writeTx, target spaceRef, docID string) error {
	var waiting int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chunks WHERE doc_id = ? AND embedded = 0 AND staged IS NULL`, docID).Scan(&waiting); err != nil {
		return err
	}
	if waiting > 0 {
		return nil
	}
	tx.vectorsChanged = true
	if tx.keepVectors {
		if err := s.recordStaged(ctx, tx, target, docID); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO vectors(space, chunk, embedding)
		SELECT ?, rowid, staged FROM chunks WHERE doc_id = ? AND staged IS NOT NULL ORDER BY rowid`, target.id, docID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE chunks SET embedded = 1, staged = NULL WHERE doc_id = ? AND staged IS NOT NULL`, docID)
	return err
}

// recordStaged records the note's staged vectors for the vector sets.
func (s *Store) recordStaged(ctx context.Context, tx *writeTx, target spaceRef, docID string) error {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, staged, sensitivity = 'open' FROM chunks WHERE doc_id = ? AND staged IS NOT NULL`, docID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		c := spaceChange{space: target.id, Change: vectorset.Change{Doc: docID, Vec: make([]float32, target.space.Dim)}}
		var blob []byte
		if err := rows.Scan(&c.ID, &blob, &c.Open); err != nil {
			return err
		}
		if err := decodeVector(c.Vec, blob); err != nil {
			return fmt.Errorf("chunk %d: %w", c.ID, err)
		}
		tx.recordVector(c)
	}
	return rows.Err()
}

// PromoteFilled makes the space being filled the active one once every
// chunk has its vector there, in one transaction that drops the old active
// space and its vectors: searches switch at once, a question embedded in
// the old space just before is answered by full text (vault.ErrOtherSpace).
// It reports whether it switched; with no space being filled, or one still
// short of vectors, it changes nothing. The background embedder calls it
// whenever the backlog is empty.
func (v *Vectors) PromoteFilled(ctx context.Context) (bool, error) {
	if v.db.writer == nil || v.db.spaces().filling.id == 0 {
		return false, nil
	}
	var old, promoted spaceRef
	err := v.db.writeVectors(ctx, "switch to the re-embedded space", func(tx *writeTx) error {
		st, err := readSpaces(ctx, tx)
		if err != nil || st.filling.id == 0 {
			return err
		}
		var waiting bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM chunks WHERE embedded = 0)`).Scan(&waiting); err != nil || waiting {
			return err
		}
		for _, q := range []string{`DELETE FROM spaces WHERE state = 'active'`, `UPDATE spaces SET state = 'active' WHERE state = 'filling'`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		old, promoted = st.active, st.filling
		tx.vectorsChanged, tx.spaces = true, &spaceState{active: st.filling}
		return nil
	})
	if err != nil || promoted.id == 0 {
		return false, err
	}
	v.db.log.Info("re-embedding done: searches use the new embedding space", keyModel, promoted.space.String(), keyDropped, old.space.String())
	// The new space's vectors are read into memory now, not by the first
	// search after, which would search by brute force until they are.
	_, err = v.db.currentSet(ctx, promoted)
	return true, err
}
