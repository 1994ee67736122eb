package index

import (
	"context"
	"database/sql"

	"github.com/vaultask/vaultask/index/vectorset"
)

// writeTx is one write transaction of the store and the record of what it
// changed: built for each write, handed to every after-commit hook once the
// write commits, and gone with it. Nothing of a write stays on the Store.
type writeTx struct {
	*sql.Tx
	// vectorsOnly marks a write that changes nothing but vectors (the
	// embedder's): nothing a graph walk or a full-text search reads.
	vectorsOnly bool
	// vectorsChanged says the write changed the stored vectors: it bumps
	// their version (vectorsVersionMeta) in its own transaction.
	vectorsChanged bool
	// keepVectors says a vector set is in memory when the write starts: the
	// changes are then recorded in vectors for the sets' hook, which
	// replays them once the write commits.
	keepVectors bool
	vectors     []spaceChange
	// spaces, when not nil, is which embedding spaces the index holds once
	// the write commits: it changed them (PromoteFilled).
	spaces *spaceState
}

// recordVector records a change to the stored vectors.
func (w *writeTx) recordVector(c spaceChange) {
	w.vectorsChanged = true
	if w.keepVectors {
		w.vectors = append(w.vectors, c)
	}
}

// afterCommit is one in-memory view of the index, by name, and what it
// does when a write of this process commits: every cache the store keeps is
// on the store's list (hooks), so nothing it remembers outlives a write.
// (pocketbase's runAfterFuncs in core/db_tx.go is the model.)
//
// A hook sees only this process's writes. Each cache is also keyed by a
// version its reads take in their own snapshot (vectorsVersionMeta,
// graphVersionMeta, the full-text structure record), which another
// process's commits change too: a read-only store notices them that way,
// and a read in a snapshot older or newer than the hook's moment never
// takes or leaves what another state holds.
type afterCommit struct {
	name string
	run  func(w *writeTx)
}

// hooks lists the store's caches and their after-commit hooks: Open
// registers them (Store.commitHooks).
func (s *Store) hooks() []afterCommit {
	return []afterCommit{
		{"embedding spaces", func(w *writeTx) {
			if w.spaces != nil {
				s.spaceState.Store(w.spaces)
			}
		}},
		{"vector sets", s.vectorsCommitted},
		{"topic members", func(w *writeTx) {
			if !w.vectorsOnly {
				s.members.clear()
			}
		}},
		{"full-text counts", func(w *writeTx) {
			if !w.vectorsOnly {
				s.ftsCounts.clear()
			}
		}},
	}
}

// write runs fn in one transaction of the writer connection, holding the
// store's write lock: committed when fn returns nil, rolled back otherwise,
// and once committed, handed to every after-commit hook (hooks). what names
// the operation in errors. A read-only store has no writer and returns
// errReadOnly. Every write bumps the graph version (see memberCache) in the
// same transaction, what it changes in the vectors (writeTx.recordVector)
// their version: what changes a note, its links or its sensitivity may
// change a walk. (pocketbase's RunInTransaction is the model.)
func (s *Store) write(ctx context.Context, what string, fn func(tx *writeTx) error) error {
	return s.writeTx(ctx, what, false, fn)
}

// writeVectors is write for a transaction that changes nothing a graph
// walk or a full-text search reads (docs, edges, aliases, chunks' text or
// sensitivity), only vectors: the background embedder's writes leave those
// caches be.
func (s *Store) writeVectors(ctx context.Context, what string, fn func(tx *writeTx) error) error {
	return s.writeTx(ctx, what, true, fn)
}

func (s *Store) writeTx(ctx context.Context, what string, vectorsOnly bool, fn func(tx *writeTx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writer == nil {
		return errReadOnly
	}
	w := &writeTx{vectorsOnly: vectorsOnly, keepVectors: s.sets.any()}
	err := inTx(ctx, s.writer, what, func(tx *sql.Tx) error {
		w.Tx = tx
		if err := fn(w); err != nil {
			return err
		}
		if w.vectorsChanged {
			if err := bumpVectorsVersion(ctx, tx); err != nil {
				return err
			}
		}
		if vectorsOnly {
			return nil
		}
		return bumpGraphVersion(ctx, tx)
	})
	// The caches follow only what committed. A reader whose snapshot is a
	// commit ahead of them or behind them meanwhile is still safe: each
	// keys what it keeps by the version in the reader's snapshot, and the
	// vector rescore re-reads every candidate in its own.
	if err == nil {
		for _, h := range s.commitHooks {
			h.run(w)
		}
	}
	return err
}

// spaceChange is a change to the vectors of one embedding space.
type spaceChange struct {
	space int64
	vectorset.Change
}
