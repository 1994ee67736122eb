package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/vaultask/vaultask/feed"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/tstest/livesyncput"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

type baselineResult struct{ fts, vec, loadRate []float64 }

// diffCycle is one cycle of the seed's design: an _all_docs diff applied
// to the index, then the new chunks embedded. It returns when each ended.
type diffCycle func() (ftsAt, vecAt time.Time, err error)

// baselineFreshness simulates the seed's design with the first model on a
// copy of its corpus index: an _all_docs diff every period, then embedding
// what changed. The result keyed -1 holds the cycle times.
func (r *run) baselineFreshness(ctx context.Context, lp *livesyncput.Client) (map[int]baselineResult, error) {
	m := r.first()
	path := filepath.Join(r.work, "baseline.db")
	if err := copyFile(m.corpusIndex, path); err != nil {
		return nil, err
	}
	defer removeIndex(path)
	store, err := index.Open(ctx, index.Options{Path: path, Space: m.space,
		Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	couch, err := feed.Connect(ctx, feed.CouchOptions{URL: r.couch.URL, Database: r.corpusDB, User: r.couch.User, Password: r.couch.Password,
		Corpus: feed.Corpus{Include: []string{"**/*.md"}, Exclude: []string{"00 inbox/**", "**/.trash/**"}}, Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer couch.Close()
	if err := r.baselineCatchUp(ctx, m, couch, store); err != nil {
		return nil, err
	}
	emb, err := m.embedder()
	if err != nil {
		return nil, err
	}
	vec := vectorizer.New(store.Vectors(), emb, vectorizer.Options{Logger: quiet})
	var cycles []float64
	cycle := func() (ftsAt, vecAt time.Time, err error) {
		start := time.Now()
		if _, err := feed.NewReconciler(couch, store.Feed()).Run(ctx, feed.ReconcileOptions{}); err != nil {
			return ftsAt, vecAt, err
		}
		ftsAt = time.Now()
		if _, err := vec.Drain(ctx); err != nil {
			return ftsAt, vecAt, err
		}
		vecAt = time.Now()
		cycles = append(cycles, ms(vecAt.Sub(start)))
		return ftsAt, vecAt, nil
	}
	out := map[int]baselineResult{}
	for _, load := range r.sz.loads {
		res, err := r.baselineLoad(ctx, lp, store, load, cycle)
		if err != nil {
			return nil, err
		}
		out[load] = res
		r.log.Info("baseline freshness", keyLoad, load, keyEdits, len(res.fts))
	}
	out[-1] = baselineResult{fts: cycles}
	return out, nil
}

// baselineCatchUp takes in, with a first diff, what the servers' phase
// left in the database, with pool vectors of m: it is not measured.
func (r *run) baselineCatchUp(ctx context.Context, m *modelRun, couch *feed.Couch, store *index.Store) error {
	if _, err := feed.NewReconciler(couch, store.Feed()).Run(ctx, feed.ReconcileOptions{}); err != nil {
		return err
	}
	pool, err := m.poolVectors(ctx, r)
	if err != nil {
		return err
	}
	_, err = vectorizer.New(store.Vectors(), poolEmbedder{pool}, vectorizer.Options{BatchChunks: 1000, Logger: quiet}).Drain(ctx)
	return err
}

// baselineEdit is an edit written and not yet found by a cycle.
type baselineEdit struct {
	e  edit
	t0 time.Time
}

// baselineLoad writes the edits of one load, under background load
// notes/s, while cycles run every period, until every edit is found or
// past the caps.
func (r *run) baselineLoad(ctx context.Context, lp *livesyncput.Client, store *index.Store, load int, cycle diffCycle) (baselineResult, error) {
	var res baselineResult
	tag := fmt.Sprintf("b%d", load)
	l := startLoad(ctx, lp, load, tag)
	defer l.stop()
	var mu sync.Mutex
	var waiting []baselineEdit
	writerDone := make(chan error, 1)
	go func() {
		for i := range r.sz.edits {
			e := newEdit(tag, i, 1<<30) // a new note each time: a cycle may take in many edits
			t0 := time.Now()
			if err := lp.Put(ctx, e.path, e.text, e.notesFirst); err != nil {
				writerDone <- err
				return
			}
			mu.Lock()
			waiting = append(waiting, baselineEdit{e, t0})
			mu.Unlock()
			time.Sleep(r.sz.period / 20)
		}
		writerDone <- nil
	}()
	writing := true
	for next := time.Now(); ; {
		time.Sleep(time.Until(next))
		next = next.Add(r.sz.period)
		ftsAt, vecAt, err := cycle()
		if err != nil {
			return res, err
		}
		mu.Lock()
		waiting, err = settleEdits(ctx, store, waiting, ftsAt, vecAt, &res)
		left := len(waiting)
		mu.Unlock()
		if err != nil {
			return res, err
		}
		if writing {
			select {
			case err := <-writerDone:
				if err != nil {
					return res, err
				}
				writing = false
			default:
			}
		}
		if !writing && left == 0 {
			break // every edit found or past the caps
		}
	}
	res.loadRate = []float64{l.rate()}
	return res, nil
}

// settleEdits records in res the edits of waiting that the cycle which
// ended its index at ftsAt and its embedding at vecAt found, and those past
// the caps, and returns the others.
func settleEdits(ctx context.Context, store *index.Store, waiting []baselineEdit, ftsAt, vecAt time.Time, res *baselineResult) ([]baselineEdit, error) {
	kept := waiting[:0]
	now := time.Now()
	for _, p := range waiting {
		hits, err := store.Search().SearchFTS(ctx, p.e.token, 3, vault.ScopeAll, vault.FieldWeights{})
		if err != nil {
			return waiting, err
		}
		switch {
		case len(hits) > 0 && hits[0].Path == p.e.path:
			res.fts = append(res.fts, capped(ftsAt.Sub(p.t0), ftsCap))
			res.vec = append(res.vec, capped(vecAt.Sub(p.t0), vectorCap))
		case now.Sub(p.t0) >= vectorCap:
			// Not found within either cap: a miss at each, as serve's.
			res.fts = append(res.fts, ms(ftsCap))
			res.vec = append(res.vec, ms(vectorCap))
		default:
			kept = append(kept, p)
		}
	}
	return kept, nil
}
