package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/vaultask/vaultask/index/vectorset"
)

// Vectors is the index as the embedder fills it (package vectorizer): the
// chunks waiting for a vector, in the space the index embeds into and,
// while it re-embeds, in the one it searches; the vectors handed back; the
// switch to a space once it is filled; and the signal that more wait.
type Vectors struct{ db *Store }

// Vectors returns the index as the embedder fills it.
func (s *Store) Vectors() *Vectors { return &Vectors{db: s} }

// The vectors table holds each chunk's vector in each embedding space, as
// float32 little-endian blobs (encodeVector). Writes here record what they
// change on the write (writeTx.recordVector), for the vector sets.

// vectorsVersionMeta counts the commits that change the stored vectors, or
// the sensitivity of a chunk with a vector, so that a read-only store knows
// when its vector set is out of date.
const vectorsVersionMeta = "vectors_version"

// bumpVectorsVersion counts one more commit that changed the vectors.
func bumpVectorsVersion(ctx context.Context, e execer) error {
	return countMeta(ctx, e, vectorsVersionMeta)
}

// spaceChange is a change to the vectors of one embedding space.
type spaceChange struct {
	space int64
	vectorset.Change
}

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

// deleteVectors removes the vectors of a note's chunks in every space.
func (w *applier) deleteVectors(ctx context.Context, docID string) error {
	type gone struct{ space, chunk int64 }
	deleted, err := queryAll(ctx, w.q, func(g *gone) []any { return []any{&g.space, &g.chunk} },
		`DELETE FROM vectors WHERE space IN (SELECT id FROM spaces) AND chunk IN (SELECT rowid FROM chunks WHERE doc_id = ?)
		RETURNING space, chunk`, docID)
	if err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	for _, g := range deleted {
		w.tx.recordVector(spaceChange{g.space, vectorset.Change{ID: g.chunk, Dropped: true}})
	}
	return nil
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
