package main

import (
	"context"
	"sync"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/transport"
	"github.com/vaultask/vaultask/vault"
)

// coverageStateTTL is how long serve's coverage judgement reuses what it
// read of the index's completeness: reading it costs the count queries of
// /status, and a few seconds of staleness changes no judgement.
const coverageStateTTL = 2 * time.Second

// statusState is what the coverage judgement needs of a status: whether
// the feed is still reading the vault for the first time (and how far it
// is, told only to a request that may see every note, as the scan counts
// personal notes), and the share of the chunks in scope without a vector
// in the space searched.
func statusState(st transport.Status, scope vault.Scope) rag.IndexState {
	var state rag.IndexState
	if st.IndexError == "" && !st.Feed.CaughtUp && !st.Feed.Resumed {
		state.Scanning = true
		if !scope.OpenOnly() {
			state.Done, state.Total = st.Feed.ScanDone, st.Feed.ScanTotal
		}
	}
	chunks, vectors := st.Index.Chunks, st.Index.Vectors
	if scope.OpenOnly() {
		chunks, vectors = st.Index.OpenChunks, st.Index.OpenVectors
	}
	if chunks > 0 && vectors < chunks {
		state.Unembedded = 1 - float64(vectors)/float64(chunks)
	}
	return state
}

// cachedState reads a status at most every coverageStateTTL for the
// coverage judgement.
type cachedState struct {
	read func(context.Context) transport.Status
	now  func() time.Time
	mu   sync.Mutex
	at   time.Time
	st   transport.Status
}

func (c *cachedState) state(ctx context.Context, scope vault.Scope) rag.IndexState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); c.at.IsZero() || now.Sub(c.at) >= coverageStateTTL {
		c.st, c.at = c.read(ctx), now
	}
	return statusState(c.st, scope)
}

// storeState is the coverage judgement's view of an index that no feed is
// filling in this process (ask, eval): complete as it is, with the share of
// its chunks still without a vector, read once.
func storeState(store *index.Store) func(context.Context, vault.Scope) rag.IndexState {
	var once sync.Once
	var st transport.Status
	return func(ctx context.Context, scope vault.Scope) rag.IndexState {
		once.Do(func() {
			st.Feed.CaughtUp = true
			is, err := store.Stats(ctx)
			if err != nil {
				return // judged as complete and embedded: the search itself reports a broken index
			}
			st.Index = transport.IndexStatus{Chunks: is.Chunks, Vectors: is.Vectors, OpenChunks: is.OpenChunks, OpenVectors: is.OpenVectors}
		})
		return statusState(st, scope)
	}
}
