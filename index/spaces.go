package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/vaultask/vaultask/vault"
)

// An index holds the vectors of one embedding space, the active one, which
// searches compare a question with. When the configured model (or its
// prefixes, or dimension) changes, the configured space becomes the
// filling one beside it: the embedder fills it in the background, chunk by
// chunk, while searches go on in the active space, and once every chunk
// has its vector there it takes the active one's place in one transaction
// (PromoteFilled). chunks.embedded and chunks.staged always speak of the
// target: the filling space while there is one, else the active one. The
// notes written meanwhile may get a vector in the active space too
// (vectors_active_backlog.go).

// spaceRef is an embedding space and its id in the spaces table; the zero
// value is none.
type spaceRef struct {
	id    int64
	space vault.EmbeddingSpace
}

// spaceState is which spaces the index holds: the active one, searched,
// and the one being filled, whose id is 0 while none is.
type spaceState struct {
	active, filling spaceRef
}

// target is the space new vectors go into.
func (st spaceState) target() spaceRef {
	if st.filling.id != 0 {
		return st.filling
	}
	return st.active
}

// readSpaces reads the spaces the index holds.
func readSpaces(ctx context.Context, q rowQuerier) (spaceState, error) {
	var st spaceState
	rows, err := q.QueryContext(ctx, `SELECT id, state, model, dim, query_prefix, document_prefix, files FROM spaces`)
	if err != nil {
		return st, fmt.Errorf("read the embedding spaces: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r spaceRef
		var state string
		if err := rows.Scan(&r.id, &state, &r.space.Model, &r.space.Dim, &r.space.QueryPrefix, &r.space.DocumentPrefix, &r.space.Files); err != nil {
			return st, fmt.Errorf("read the embedding spaces: %w", err)
		}
		if state == "active" {
			st.active = r
		} else {
			st.filling = r
		}
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("read the embedding spaces: %w", err)
	}
	return st, nil
}

// spaces is the store's current spaceState.
func (s *Store) spaces() spaceState { return *s.spaceState.Load() }

// ensureSpace makes the configured space the target (see the comment at
// the top of this file): recorded as the active space of a new index (or
// of any with rebuild, which drops every vector), kept when it already is
// the active or the filling space, else made the filling one, which
// replaces a half-filled other. Going back to the active space drops the
// half-filled one, and the chunks written since it began wait for their
// vector in the active space again. The active model's files changed
// under its name (another Files) are a rebuild: the spaces table holds a
// model once, and no embedder of the old files is left to answer
// questions in the old space meanwhile.
func (s *Store) ensureSpace(ctx context.Context, rebuild bool) error {
	st, err := readSpaces(ctx, s.writer)
	if err != nil {
		return err
	}
	want := s.space
	if adopt := adoptFiles(st, want); len(adopt) > 0 {
		if err := inTx(ctx, s.writer, "record the embedding model's files", execSteps(ctx, adopt)); err != nil {
			return err
		}
		if st, err = readSpaces(ctx, s.writer); err != nil {
			return err
		}
	}
	record := sqlStep{insertSpaceSQL, []any{want.Model, want.Dim, want.QueryPrefix, want.DocumentPrefix, want.Files, "active"}}
	var steps []sqlStep
	switch {
	case rebuild || st.active.id == 0:
		steps = []sqlStep{{q: `DELETE FROM spaces`}, record, {q: `UPDATE chunks SET embedded = 0, staged = NULL`}}
	case otherFiles(st.active.space, want):
		// The index holds one space per model name: the new files' vectors
		// are made from nothing, and full text answers until they are.
		steps = []sqlStep{{q: `DELETE FROM spaces`}, record, {q: `UPDATE chunks SET embedded = 0, staged = NULL`}}
		s.log.Info("the embedding model's files changed: every chunk is embedded again; questions are answered by full text until it is done",
			keyModel, want.String(), keyDropped, st.active.space.String())
	case st.active.space == want && st.filling.id == 0:
		return s.loadSpaces(ctx, s.writer)
	case st.active.space == want:
		steps = []sqlStep{{q: `DELETE FROM spaces WHERE state = 'filling'`},
			{`UPDATE chunks SET staged = NULL, embedded = EXISTS (SELECT 1 FROM vectors v WHERE v.space = ? AND v.chunk = chunks.rowid)`, []any{st.active.id}}}
		s.log.Info("back to the index's embedding space: the vectors of the one being filled are dropped",
			keyModel, want.String(), keyDropped, st.filling.space.String())
	case st.filling.space == want:
		s.log.Info("re-embedding the index goes on where it stopped; searches use the old space until it is done",
			keyModel, want.String(), keyActive, st.active.space.String())
		return s.loadSpaces(ctx, s.writer)
	default:
		record.args[5] = "filling"
		steps = []sqlStep{{q: `DELETE FROM spaces WHERE state = 'filling'`}, record, {q: `UPDATE chunks SET embedded = 0, staged = NULL`}}
		s.log.Info("the embedding model changed: re-embedding every chunk in the background; searches use the old space until it is done",
			keyModel, want.String(), keyActive, st.active.space.String())
	}
	err = inTx(ctx, s.writer, "record the embedding space", func(tx *sql.Tx) error {
		if err := execSteps(ctx, steps)(tx); err != nil {
			return err
		}
		return bumpVectorsVersion(ctx, tx)
	})
	if err != nil {
		return err
	}
	s.signalChanged()
	return s.loadSpaces(ctx, s.writer)
}

// adoptFiles records want's files for a space of its model recorded
// before spaces recorded their files (Files ""): those were the files the
// model was pinned to then, which are the ones it is pinned to now
// (migration 0016), and its vectors stay.
func adoptFiles(st spaceState, want vault.EmbeddingSpace) []sqlStep {
	var steps []sqlStep
	for _, r := range []spaceRef{st.active, st.filling} {
		if r.id != 0 && r.space.Files == "" && want.Files != "" && withFiles(r.space, want.Files) == want {
			steps = append(steps, sqlStep{`UPDATE spaces SET files = ? WHERE id = ?`, []any{want.Files, r.id}})
		}
	}
	return steps
}

// otherFiles reports whether a and b are one model, one dimension and one
// pair of prefixes, of other files: the weights changed under the name.
func otherFiles(a, b vault.EmbeddingSpace) bool {
	return a.Files != b.Files && withFiles(a, b.Files) == b
}

func withFiles(e vault.EmbeddingSpace, files string) vault.EmbeddingSpace {
	e.Files = files
	return e
}

// sqlStep is a statement and its arguments.
type sqlStep struct {
	q    string
	args []any
}

// execSteps runs steps in a transaction, in order.
func execSteps(ctx context.Context, steps []sqlStep) func(tx *sql.Tx) error {
	return func(tx *sql.Tx) error {
		for _, step := range steps {
			if _, err := tx.ExecContext(ctx, step.q, step.args...); err != nil {
				return err
			}
		}
		return nil
	}
}

// insertSpaceSQL records a space, in the state its last argument names.
const insertSpaceSQL = `INSERT INTO spaces(model, dim, query_prefix, document_prefix, files, state) VALUES (?, ?, ?, ?, ?, ?)`

// loadSpaces reads the spaces the index holds into the store.
func (s *Store) loadSpaces(ctx context.Context, q rowQuerier) error {
	st, err := readSpaces(ctx, q)
	if err != nil {
		return err
	}
	s.spaceState.Store(&st)
	return nil
}

// checkQuery refuses a query vector that is not of the active space, or
// not of its dimension; what names the search in errors. It returns the
// active space, whose vectors the search reads. A read-only store reads
// which space is active first: another process switches it.
func (s *Store) checkQuery(ctx context.Context, what string, q vault.QueryVector) (spaceRef, error) {
	if s.writer == nil {
		if err := s.loadSpaces(ctx, s.prepared); err != nil {
			return spaceRef{}, fmt.Errorf("%s: %w", what, err)
		}
	}
	active := s.spaces().active
	if q.Space != active.space {
		return active, fmt.Errorf("%s: %w: the query was embedded in %s, the index searches %s", what, vault.ErrOtherSpace, q.Space, active.space)
	}
	if len(q.Values) != active.space.Dim {
		return active, fmt.Errorf("%s: query has %d dimensions, the index holds %d", what, len(q.Values), active.space.Dim)
	}
	return active, nil
}

// errNoSpace is a read of an index that has no embedding space yet: one no
// writer has opened since its creation.
var errNoSpace = errors.New("the index records no embedding space yet (open it once for writing, e.g. with `vaultask index`)")

// The vectors table holds each chunk's vector in each embedding space, as
// float32 little-endian blobs (encodeVector). Every write to it records what
// it changes on the write (writeTx.recordVector), for the vector sets.

// encodeVector is v as the vectors table and chunks.staged hold it.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector reads a vector as encodeVector writes it into v.
func decodeVector(v []float32, blob []byte) error {
	if len(blob) != 4*len(v) {
		return fmt.Errorf("%d bytes, want %d", len(blob), 4*len(v))
	}
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
	}
	return nil
}
