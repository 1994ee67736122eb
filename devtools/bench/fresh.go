package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vaultask/vaultask/tstest/livesyncput"
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
	s.Command = r.reproduce("2,7,1")
	if err := r.noCorpusIndex(); err != nil {
		return err
	}
	lp := &livesyncput.Client{DB: r.couch.DBURL(r.corpusDB), User: r.couch.User, Password: r.couch.Password, HTTP: httpClient}
	s.Notes = append(s.Notes,
		fmt.Sprintf("`vaultask serve` (the real binary) follows the %s database of the test CouchDB, once for each built-in model (%s), each a new server on the index section 2 built with the model, whose background embedder then embeds every edit (e5 on threads of the lowest priority, internal/lowprio). Each measured edit writes a note in LiveSync format with `tstest/livesyncput` (a generated note of 1–3 KB, so 1–4 LiveSync chunks; every other edit writes the note before its chunks, in two requests), %d edits per load, round-robin over 25 notes (new at first, then edited; each model's its own). The clock starts before the first write request.", r.sz.corpus, r.modelLabels(), r.sz.edits),
		"Before a model's first edit its server has caught up (`/status`: the feed caught up, no lag, no embedding backlog): with the model after the first, that is embedding what the earlier model's edits and background load wrote.",
		"FTS: polled through MCP `vault_search` (5 ms between calls) with the edit's unique word until a hit of that note has provenance fts. Vector: then polled with the edit's intro paragraph until a hit of the note has provenance vector: the model has embedded the new revision (an edit's old vectors go in the same transaction as its old text).",
		"Resolution: an edit counts as searchable from when a search sent then finds it. The second row of each pair is when the first `vault_search` call that found it was sent; the call before it, sent one search plus 5 ms earlier, missed it: so that figure is known to within the poll interval (5 ms) plus one search latency. The first row of each pair, on which the target is read, is when the finding call returned: the second plus one search (a full hybrid search, the query's embedding by the model included).",
		fmt.Sprintf("Background load: edits of 500 other generated notes at the rate shown, from four writers, running 2 s before and throughout. A wait is capped at %v (FTS) and %v (vector); a miss (not found by then) counts at the cap, and after three vector misses in a row the vector column of that load stops (the embedder is behind the load and the backlog only grows).", ftsCap, vectorCap),
		fmt.Sprintf("Baseline of the first model (%s): the seed's design, an `_all_docs` diff every %v, simulated in process in the same run (the servers above stopped first): feed.Reconciler lists the whole database and applies what changed, then the model embeds the new chunks (index.Vectorizer.Drain); an edit is searchable at the end of the first cycle whose index has its word, and vector-searchable when that cycle's embedding ends. Its edits are spread over the cycles (one every %v), with the same background loads. The same caps apply: a wait past a cap, or an edit no cycle has found %v after its write, counts at the cap, and each row's note gives the misses of both sides. A model after the first is compared with the first's figures through serve in the same run.", r.first().label, r.sz.period, r.sz.period/20, vectorCap),
		"Serve edits 25 notes in turn (each a new note the first time, then an edit of it); the baseline writes a new note for each edit, since one cycle takes in about 20 edits and a note edited twice before a cycle saw it would lose its first edit.",
		fmt.Sprintf("Behind a big note (issue 40), after the loads, once the server has caught up with them (no embedding backlog), with no background load: a new revision of a big note (%s of generated sections) is written and found by full text, and 0–2 s later a one-line note; the one-line note is timed until found by full text, then by vector search (capped at %v). %d one-line notes behind each size, each behind a new revision of the big note, which is deleted at the end. The clock starts before the one-line note's write.", sizesText(r.sz.bigNotes), smallCap, r.sz.behind),
		"Targets: FTS p99 < 250 ms at every load (issue 13); vector p99 < 2 s with USE-lite at every load (issue 13), < 5 s with e5 and bge up to 10 notes/s (issues 35, 40); a one-line note behind a big note found by vector search p99 < 5 s (issue 40). Peak RSS is the server's VmHWM when its edits are done: its most since it started, catching up included.")
	results := map[*modelRun]map[int]*freshResult{}
	behind := map[*modelRun]map[int]*behindResult{}
	for _, m := range r.models {
		res, err := r.serveFreshness(ctx, s, m, lp)
		if err != nil {
			return err
		}
		results[m] = res
		// Behind a big note, and nothing else: the loads' backlog first.
		if _, err := r.serve.waitSettled(ctx, 30*time.Minute); err != nil {
			return err
		}
		mcp, err := newMCP(ctx, r.serve.URL)
		if err != nil {
			return err
		}
		if behind[m], err = r.behindBig(ctx, mcp, lp, strings.ReplaceAll(m.name, "-", "")); err != nil {
			return err
		}
	}
	if err := r.stopServe(); err != nil {
		return err
	}
	base, err := r.baselineFreshness(ctx, lp)
	if err != nil {
		return err
	}
	for i, m := range r.models {
		r.freshRows(s, i, results[m], results[r.first()], base)
		r.behindRows(s, m, behind[m])
	}
	s.dist(fmt.Sprintf("baseline: one _all_docs diff cycle (list, apply, embed), every %v", r.sz.period), "ms", base[-1].fts)
	return nil
}

// freshResult is what one load measured through serve with one model.
type freshResult struct {
	fts, ftsSent, vec, vecSent, write, loadRate []float64
	peakRSS                                     []float64 // on load -1 only
}

// freshRows adds the i-th model's rows: the first's against the _all_docs
// baseline, another's against the first's (first) through serve.
func (r *run) freshRows(s *Section, i int, res, first map[int]*freshResult, base map[int]baselineResult) {
	m := r.models[i]
	for _, load := range r.sz.loads {
		x, at := res[load], fmt.Sprintf("background load %d notes/s, %s", load, m.label)
		var bName, bMiss string
		var bFTS, bVec, bRate []float64
		if i == 0 {
			bName, bMiss = fmt.Sprintf("_all_docs diff every %v", r.sz.period), "in the baseline"
			bFTS, bVec, bRate = base[load].fts, base[load].vec, base[load].loadRate
		} else {
			bName, bMiss = r.sameRun(" through serve"), "with "+r.first().label
			bFTS, bVec, bRate = first[load].fts, first[load].vec, first[load].loadRate
		}
		fr := s.dist("write → found by FTS through serve (the finding search returned), "+at, "ms", x.fts).against(bName, bFTS).target("p99 < 250 ms", p99, 250, false)
		fr.Note = missNote(x.fts, bFTS, ftsCap, bMiss)
		s.dist("  the same until the finding search was sent, "+at, "ms", x.ftsSent)
		vr := s.dist("write → found by vector search through serve (the finding search returned), "+at, "ms", x.vec).against(bName, bVec)
		if load <= m.targets.vectorFreshLoad {
			vr.target(fmt.Sprintf("p99 < %g s", m.targets.vectorFresh/1000), p99, m.targets.vectorFresh, false)
		}
		vr.Note = missNote(x.vec, bVec, vectorCap, bMiss)
		if len(x.vec) < len(x.fts) {
			vr.Note += fmt.Sprintf("; serve stopped after %d edits: three misses in a row", len(x.vec))
		}
		s.dist("  the same until the finding search was sent, "+at, "ms", x.vecSent)
		s.dist("the LiveSync write itself, "+at, "ms", x.write)
		if load > 0 {
			against := "the baseline's run"
			if i > 0 {
				against = r.sameRun("'s run")
			}
			s.add("background load achieved, "+at, "notes/s", x.loadRate).against(against, bRate)
		}
	}
	row := s.add("peak RSS of vaultask serve, "+m.label, "MiB", res[-1].peakRSS)
	if i > 0 {
		row.against(r.sameRun(""), first[-1].peakRSS)
	}
}

// serveFreshness measures the edits of every load through a new serve
// embedding with m, once it has caught up. The result keyed -1 holds the
// server's peak RSS.
func (r *run) serveFreshness(ctx context.Context, s *Section, m *modelRun, lp *livesyncput.Client) (map[int]*freshResult, error) {
	if err := r.stopServe(); err != nil {
		return nil, err
	}
	srv, err := r.serveFor(ctx, m)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	if _, err := srv.waitSettled(ctx, 30*time.Minute); err != nil {
		return nil, err
	}
	if took := time.Since(t); took > time.Second {
		s.Notes = append(s.Notes, fmt.Sprintf("The server with %s caught up in %v before its first edit.", m.label, took.Round(100*time.Millisecond)))
	}
	mcp, err := newMCP(ctx, srv.URL)
	if err != nil {
		return nil, err
	}
	results := map[int]*freshResult{}
	for _, load := range r.sz.loads {
		tag := fmt.Sprintf("%sl%d", strings.ReplaceAll(m.name, "-", ""), load)
		res, err := r.freshLoad(ctx, mcp, lp, tag, load)
		if err != nil {
			return nil, err
		}
		results[load] = res
		r.log.Info("freshness", keyModel, m.name, keyLoad, load, keyEdits, len(res.fts))
	}
	peak, err := srv.PeakRSS()
	if err != nil {
		return nil, err
	}
	results[-1] = &freshResult{peakRSS: []float64{mib(peak)}}
	return results, nil
}

// freshLoad writes the edits of one load, tagged tag, under background
// load notes/s, and times each until found by each search arm.
func (r *run) freshLoad(ctx context.Context, mcp *mcpClient, lp *livesyncput.Client, tag string, load int) (*freshResult, error) {
	res := &freshResult{}
	l := startLoad(ctx, lp, load, tag)
	defer l.stop()
	time.Sleep(2 * time.Second)
	vecTimeouts, vecOff := 0, false
	for i := range r.sz.edits {
		e := newEdit(tag, i, 25)
		t0 := time.Now()
		if err := lp.Put(ctx, e.path, e.text, e.notesFirst); err != nil {
			return nil, err
		}
		res.write = append(res.write, ms(time.Since(t0)))
		sent, d, err := pollUntil(ctx, t0, ftsCap, func() (bool, error) {
			hits, err := mcp.search(ctx, e.token, 8)
			return found(hits, e.path, "fts"), err
		})
		if err != nil {
			return nil, err
		}
		res.fts, res.ftsSent = append(res.fts, ms(d)), append(res.ftsSent, ms(sent))
		if !vecOff {
			sent, d, err := pollUntil(ctx, t0, vectorCap, func() (bool, error) {
				hits, err := mcp.search(ctx, e.intro, 20)
				return found(hits, e.path, "vector"), err
			})
			if err != nil {
				return nil, err
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
	return res, nil
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
// baseline, named by where.
func missNote(serve, base []float64, limit time.Duration, where string) string {
	count := func(xs []float64) int {
		n := 0
		for _, x := range xs {
			if x >= ms(limit) {
				n++
			}
		}
		return n
	}
	return fmt.Sprintf("misses at the %v cap: %d of %d through serve, %d of %d %s", limit, count(serve), len(serve), count(base), len(base), where)
}
