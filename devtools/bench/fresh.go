package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vaultask/vaultask/feed"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/tstest/livesyncput"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

// How long one edit may take to become searchable before it counts as a
// miss, recorded at the cap, through serve and in the baseline alike.
const (
	ftsCap    = 10 * time.Second
	vectorCap = 20 * time.Second
)

// edit is one measured write: a note with a word no other note has, in an
// intro that is also the vector query.
type edit struct {
	path, token, intro, text string
	notesFirst               bool
}

func newEdit(tag string, i, paths int) edit {
	r := rand.New(rand.NewPCG(uint64(i), 99))
	token := fmt.Sprintf("fresh%sx%d", tag, i)
	intro := token + " " + paragraph(r, 4)
	body := NoteText(1000 + i)
	if _, rest, ok := strings.Cut(body, "\n\n"); ok { // drop its title
		body = rest
	}
	path := fmt.Sprintf("Fresh/%s/Edit %d.md", tag, i%paths)
	return edit{path: path, token: token, intro: intro, text: fmt.Sprintf("# Edit %d\n\n%s\n\n%s", i, intro, body), notesFirst: i%2 == 1}
}

// loader writes background notes at a rate until stopped.
type loader struct {
	stop    func()
	wg      sync.WaitGroup
	written atomic.Int64
	failed  atomic.Int64
	start   time.Time
}

// startLoad writes rate notes/s (edits of 500 generated notes, half of
// them note before chunks) into lp's database, from four writers.
func startLoad(ctx context.Context, lp *livesyncput.Client, rate int, tag string) *loader {
	l := &loader{start: time.Now()}
	if rate == 0 {
		l.stop = func() {}
		return l
	}
	ctx, cancel := context.WithCancel(ctx)
	ticks := make(chan int, 64)
	l.wg.Go(func() {
		defer close(ticks)
		t := time.NewTicker(time.Second / time.Duration(rate))
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case ticks <- i:
				default: // the writers are behind: this tick is lost, and shows in the achieved rate
				}
			}
		}
	})
	for range 4 {
		l.wg.Go(func() {
			for i := range ticks {
				path := fmt.Sprintf("Load/%s/Note %d.md", tag, i%500)
				if err := lp.Put(ctx, path, NoteText(i), i%2 == 1); err != nil {
					if ctx.Err() == nil {
						l.failed.Add(1)
					}
					continue
				}
				l.written.Add(1)
			}
		})
	}
	l.stop = func() { cancel(); l.wg.Wait() }
	return l
}

func (l *loader) rate() float64 { return float64(l.written.Load()) / time.Since(l.start).Seconds() }

func freshness(ctx context.Context, r *run, s *Section) error {
	s.Command = "go run -tags sqlite_fts5 ./devtools/cmd/bench -only 2,7,1 -size " + r.cfg.Size
	if r.serve == nil {
		return skipf("no server: section 7 did not run")
	}
	lp := &livesyncput.Client{DB: r.couch.DBURL(r.corpusDB), User: r.couch.User, Password: r.couch.Password, HTTP: httpClient}
	mcp, err := newMCP(ctx, r.serve.URL)
	if err != nil {
		return err
	}
	s.Notes = append(s.Notes,
		fmt.Sprintf("`vaultask serve` (the real binary, built-in embedder) follows the %s database of the test CouchDB. Each measured edit writes a note in LiveSync format with `tstest/livesyncput` (a generated note of 1–3 KB, so 1–4 LiveSync chunks; every other edit writes the note before its chunks, in two requests), %d edits per load, round-robin over 25 notes (new at first, then edited). The clock starts before the first write request.", r.sz.corpus, r.sz.edits),
		"FTS: polled through MCP `vault_search` (5 ms between calls) with the edit's unique word until a hit of that note has provenance fts. Vector: then polled with the edit's intro paragraph until a hit of the note has provenance vector: the built-in embedder has embedded the new revision (an edit's old vectors go in the same transaction as its old text).",
		"Resolution: an edit counts as searchable from when a search sent then finds it. The second row of each pair is when the first `vault_search` call that found it was sent; the call before it, sent one search plus 5 ms earlier, missed it: so that figure is known to within the poll interval (5 ms) plus one search latency. The first row of each pair, on which the target is read, is when the finding call returned: the second plus one search (a full hybrid search, the query's embedding included).",
		fmt.Sprintf("Background load: edits of 500 other generated notes at the rate shown, from four writers, running 2 s before and throughout. A wait is capped at %v (FTS) and %v (vector); a miss (not found by then) counts at the cap, and after three vector misses in a row the vector column of that load stops (the embedder is behind the load and the backlog only grows).", ftsCap, vectorCap),
		fmt.Sprintf("Baseline: the seed's design, an `_all_docs` diff every %v, simulated in process in the same run (the serve above stopped first): feed.Reconciler lists the whole database and applies what changed, then the built-in embedder embeds the new chunks (index.Vectorizer.Drain); an edit is searchable at the end of the first cycle whose index has its word, and vector-searchable when that cycle's embedding ends. Its edits are spread over the cycles (one every %v), with the same background loads. The same caps apply: a wait past a cap, or an edit no cycle has found %v after its write, counts at the cap, and each row's note gives the misses of both sides.", r.sz.period, r.sz.period/20, vectorCap),
		"Serve edits 25 notes in turn (each a new note the first time, then an edit of it); the baseline writes a new note for each edit, since one cycle takes in about 20 edits and a note edited twice before a cycle saw it would lose its first edit.")
	type result struct{ fts, ftsSent, vec, vecSent, write, loadRate []float64 }
	results := map[int]*result{}
	for _, load := range r.sz.loads {
		res := &result{}
		results[load] = res
		tag := fmt.Sprintf("l%d", load)
		l := startLoad(ctx, lp, load, tag)
		time.Sleep(2 * time.Second)
		vecTimeouts, vecOff := 0, false
		for i := range r.sz.edits {
			e := newEdit(tag, i, 25)
			t0 := time.Now()
			if err := lp.Put(ctx, e.path, e.text, e.notesFirst); err != nil {
				l.stop()
				return err
			}
			res.write = append(res.write, ms(time.Since(t0)))
			sent, d, err := pollUntil(ctx, t0, ftsCap, func() (bool, error) {
				hits, err := mcp.search(ctx, e.token, 8)
				return found(hits, e.path, "fts"), err
			})
			if err != nil {
				l.stop()
				return err
			}
			res.fts, res.ftsSent = append(res.fts, ms(d)), append(res.ftsSent, ms(sent))
			if !vecOff {
				sent, d, err := pollUntil(ctx, t0, vectorCap, func() (bool, error) {
					hits, err := mcp.search(ctx, e.intro, 20)
					return found(hits, e.path, "vector"), err
				})
				if err != nil {
					l.stop()
					return err
				}
				res.vec, res.vecSent = append(res.vec, ms(d)), append(res.vecSent, ms(sent))
				if d >= vectorCap {
					vecTimeouts++
				} else {
					vecTimeouts = 0
				}
				vecOff = vecTimeouts >= 3
			}
			time.Sleep(time.Duration(50+rand.IntN(150)) * time.Millisecond)
		}
		res.loadRate = []float64{l.rate()}
		l.stop()
		r.log.Info("freshness", keyLoad, load, keyEdits, len(res.fts))
	}
	if err := r.serve.stop(); err != nil {
		return err
	}
	r.serve = nil
	base, err := r.baselineFreshness(ctx, s, lp)
	if err != nil {
		return err
	}
	for _, load := range r.sz.loads {
		res, b := results[load], base[load]
		at := fmt.Sprintf("background load %d notes/s", load)
		fr := s.dist("write → found by FTS through serve (the finding search returned), "+at, "ms", res.fts).against(fmt.Sprintf("_all_docs diff every %v", r.sz.period), b.fts).target("p99 < 250 ms", p99, 250, false)
		fr.Note = missNote(res.fts, b.fts, ftsCap)
		s.dist("  the same until the finding search was sent, "+at, "ms", res.ftsSent)
		vr := s.dist("write → found by vector search through serve (the finding search returned), "+at, "ms", res.vec).against(fmt.Sprintf("_all_docs diff every %v", r.sz.period), b.vec).target("p99 < 2 s", p99, 2000, false)
		vr.Note = missNote(res.vec, b.vec, vectorCap)
		if len(res.vec) < len(res.fts) {
			vr.Note += fmt.Sprintf("; serve stopped after %d edits: three misses in a row", len(res.vec))
		}
		s.dist("  the same until the finding search was sent, "+at, "ms", res.vecSent)
		s.dist("the LiveSync write itself, "+at, "ms", res.write)
		if load > 0 {
			s.add("background load achieved, "+at, "notes/s", res.loadRate).against("the baseline's run", b.loadRate)
		}
	}
	s.dist(fmt.Sprintf("baseline: one _all_docs diff cycle (list, apply, embed), every %v", r.sz.period), "ms", base[-1].fts)
	return nil
}

// pollUntil calls check until it reports true or limit passes since t0,
// and returns the times since t0 when the check that reported true began
// and when it returned (both limit on a miss). A failed check is tried
// again; ten failures in a row end the poll with the last error.
func pollUntil(ctx context.Context, t0 time.Time, limit time.Duration, check func() (bool, error)) (sent, done time.Duration, err error) {
	failures := 0
	for {
		began := time.Since(t0)
		ok, err := check()
		if err != nil {
			if failures++; failures == 10 {
				return 0, 0, err
			}
		} else {
			failures = 0
		}
		d := time.Since(t0)
		if d >= limit {
			return limit, limit, nil
		}
		if ok {
			return began, d, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// capped is a wait in ms, limit when it is longer: a miss.
func capped(d, limit time.Duration) float64 { return ms(min(d, limit)) }

// missNote counts the misses (waits at the cap) through serve and in the
// baseline.
func missNote(serve, base []float64, limit time.Duration) string {
	count := func(xs []float64) int {
		n := 0
		for _, x := range xs {
			if x >= ms(limit) {
				n++
			}
		}
		return n
	}
	return fmt.Sprintf("misses at the %v cap: %d of %d through serve, %d of %d in the baseline", limit, count(serve), len(serve), count(base), len(base))
}

type baselineResult struct{ fts, vec, loadRate []float64 }

// baselineFreshness simulates the seed's design on a copy of the corpus
// index: an _all_docs diff every period, then embedding what changed. The
// result keyed -1 holds the cycle times.
func (r *run) baselineFreshness(ctx context.Context, s *Section, lp *livesyncput.Client) (map[int]baselineResult, error) {
	path := filepath.Join(r.work, "baseline.db")
	if err := copyFile(r.corpusIndex, path); err != nil {
		return nil, err
	}
	defer os.Remove(path)
	store, err := index.Open(ctx, index.Options{Path: path, Space: builtinSpace,
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
	emb, err := llm.NewEmbedder(builtinSpace.Model, llm.EmbedderOptions{Dim: builtinSpace.Dim})
	if err != nil {
		return nil, err
	}
	vec := vectorizer.New(store, emb, vectorizer.Options{Logger: quiet})
	var cycles []float64
	cycle := func() (ftsAt, vecAt time.Time, err error) {
		start := time.Now()
		if _, err := feed.NewReconciler(couch, store).Run(ctx, feed.ReconcileOptions{}); err != nil {
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
	// A first diff takes in what the follower's phase left in the database,
	// with pool vectors: it is not measured.
	if _, err := feed.NewReconciler(couch, store).Run(ctx, feed.ReconcileOptions{}); err != nil {
		return nil, err
	}
	pool, err := r.poolVectors(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := vectorizer.New(store, poolEmbedder{pool}, vectorizer.Options{BatchChunks: 1000, Logger: quiet}).Drain(ctx); err != nil {
		return nil, err
	}
	out := map[int]baselineResult{}
	for _, load := range r.sz.loads {
		tag := fmt.Sprintf("b%d", load)
		l := startLoad(ctx, lp, load, tag)
		type pending struct {
			e  edit
			t0 time.Time
		}
		var mu sync.Mutex
		var waiting []pending
		var res baselineResult
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
				waiting = append(waiting, pending{e, t0})
				mu.Unlock()
				time.Sleep(r.sz.period / 20)
			}
			writerDone <- nil
		}()
		writing := true
		next := time.Now()
		for {
			time.Sleep(time.Until(next))
			next = next.Add(r.sz.period)
			ftsAt, vecAt, err := cycle()
			if err != nil {
				l.stop()
				return nil, err
			}
			mu.Lock()
			kept := waiting[:0]
			now := time.Now()
			for _, p := range waiting {
				hits, err := store.SearchFTS(ctx, p.e.token, 3, vault.ScopeAll, vault.FieldWeights{})
				if err != nil {
					mu.Unlock()
					l.stop()
					return nil, err
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
			waiting = kept
			left := len(waiting)
			mu.Unlock()
			if writing {
				select {
				case err := <-writerDone:
					if err != nil {
						l.stop()
						return nil, err
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
		l.stop()
		out[load] = res
		r.log.Info("baseline freshness", keyLoad, load, keyEdits, len(res.fts))
	}
	out[-1] = baselineResult{fts: cycles}
	return out, nil
}
