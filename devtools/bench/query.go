package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/vaultask/vaultask/cmd/ragconfig"
	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/feed"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/tstest/livesyncput"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

// settings are the retrieval defaults, mapped from config as every command maps them.
func settings() rag.Settings { return ragconfig.Settings(config.Default()) }

// latencies are the measured retrieval times of one index.
type latencies struct {
	retrieve, embed, knn, fts []float64
	// profile is pprof -top of a pass of the retrieval loop after the
	// measured ones, when asked: the profiler does not run while timing.
	profile string
}

// bruteForce is the index with its vector search done by brute force over
// every float vector, as before the vector set: the baseline the set's
// retrieval is compared with.
type bruteForce struct{ *index.Search }

func (s bruteForce) SearchVector(ctx context.Context, q vault.QueryVector, k int, scope vault.Scope) ([]vault.Chunk, error) {
	return s.SearchVectorExact(ctx, q, k, scope)
}

// measureRetrieval runs the default retrieval (vector, FTS, fusion, graph;
// no rerank, no generation) with model m's query embedding on searcher n
// times over the questions qs, warm, and each of the store's searches
// alone; with profile, then n more times under the CPU profiler, untimed.
func (r *run) measureRetrieval(ctx context.Context, m *modelRun, searcher rag.Searcher, store *index.Store, qs []string, n int, profile bool) (latencies, error) {
	var out latencies
	emb, err := m.embedder()
	if err != nil {
		return out, err
	}
	p, err := rag.New(rag.Options{Searcher: searcher, Embedder: rag.SpaceEmbedder{Texts: emb, Space: m.space}, Settings: settings(), Logger: quiet})
	if err != nil {
		return out, err
	}
	vecs, err := queryVectors(ctx, emb, m.space, qs)
	if err != nil {
		return out, err
	}
	// Warm: the vector shortlist (a store reads it at its first vector
	// search, by brute force until it is read), the page cache and SQLite's.
	if err := store.Search().WarmVectorSearch(ctx); err != nil {
		return out, err
	}
	for _, q := range qs {
		if _, err := p.Retrieve(ctx, rag.Question{Text: q}); err != nil {
			return out, err
		}
	}
	for i := range n {
		t := time.Now()
		if _, err := p.Retrieve(ctx, rag.Question{Text: qs[i%len(qs)]}); err != nil {
			return out, err
		}
		out.retrieve = append(out.retrieve, ms(time.Since(t)))
	}
	k := settings().VectorTopK
	for i := range n {
		q := qs[i%len(qs)]
		t := time.Now()
		if _, err := emb.EmbedQueries(ctx, []string{q}); err != nil {
			return out, err
		}
		out.embed = append(out.embed, ms(time.Since(t)))
		t = time.Now()
		if _, err := store.Search().SearchVector(ctx, vecs[i%len(vecs)], k, vault.ScopeAll); err != nil {
			return out, err
		}
		out.knn = append(out.knn, ms(time.Since(t)))
		t = time.Now()
		if _, err := store.Search().SearchFTS(ctx, rag.FTSText(q), settings().FTSTopK, vault.ScopeAll, settings().FTSFields); err != nil {
			return out, err
		}
		out.fts = append(out.fts, ms(time.Since(t)))
	}
	if profile {
		var prof bytes.Buffer
		if err := pprof.StartCPUProfile(&prof); err != nil {
			return out, err
		}
		for i := range n {
			if _, err := p.Retrieve(ctx, rag.Question{Text: qs[i%len(qs)]}); err != nil {
				pprof.StopCPUProfile()
				return out, err
			}
		}
		pprof.StopCPUProfile()
		out.profile = pprofTop(prof.Bytes())
	}
	return out, nil
}

// pprofTop is `go tool pprof -top` of a CPU profile of this process.
func pprofTop(profile []byte) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.CreateTemp("", "vaultask-bench-*.pprof")
	if err != nil {
		return ""
	}
	defer os.Remove(f.Name())
	_, _ = f.Write(profile)
	f.Close()
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=14", exe, f.Name()).Output()
	if err != nil {
		return ""
	}
	var keep []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, "File:") || strings.HasPrefix(line, "Build ID:") || strings.HasPrefix(line, "Type:") || strings.HasPrefix(line, "Time:") {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// withFollower runs fn while a LiveSync follower (and model m's embedder,
// as serve runs them) writes rate notes/s into store from a database of
// its own.
func (r *run) withFollower(ctx context.Context, m *modelRun, store *index.Store, name string, rate int, fn func() error) error {
	db := "bench-follow-" + name
	if err := r.couch.CreateDB(db); err != nil {
		return err
	}
	defer func() { _ = r.couch.DeleteDB(db) }()
	couch, err := feed.Connect(ctx, feed.CouchOptions{URL: r.couch.URL, Database: db, User: r.couch.User, Password: r.couch.Password,
		Corpus: feed.Corpus{Include: []string{"**/*.md"}}, Logger: quiet})
	if err != nil {
		return err
	}
	defer couch.Close()
	before, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	f := feed.NewFollower(couch, store.Feed(), feed.FollowerOptions{})
	if err := f.Open(ctx); err != nil {
		return err
	}
	// The follower has no checkpoint for this database, so it scans it
	// whole first. The load starts only after that scan: a scan that lists
	// the load's first notes would find the index's own notes missing from
	// the database and remove them, and the queries would run on an
	// emptying index. Listing an empty database removes nothing.
	for deadline := time.Now().Add(2 * time.Minute); f.Stats().Reconciles == 0; {
		if time.Now().After(deadline) {
			return joinErr(errors.New("the follower's first scan did not end within 2m"), f.Close(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	emb, err := m.embedder()
	if err != nil {
		return err
	}
	v := vectorizer.New(store.Vectors(), emb, vectorizer.Options{Logger: quiet})
	if err := v.Open(ctx); err != nil {
		return err
	}
	lp := &livesyncput.Client{DB: r.couch.DBURL(db), User: r.couch.User, Password: r.couch.Password, HTTP: httpClient}
	l := startLoad(ctx, lp, rate, name)
	time.Sleep(2 * time.Second)
	err = fn()
	l.stop()
	closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := joinErr(err, f.Close(closing), v.Close(closing)); err != nil {
		return err
	}
	after, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	if after.Notes < before.Notes {
		return fmt.Errorf("the index lost %d of its %d notes while the follower ran: the measurement was not of this index", before.Notes-after.Notes, before.Notes)
	}
	return nil
}

func joinErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func retrievalLatency(ctx context.Context, r *run, s *Section) error {
	s.Command = r.reproduce("3")
	m := r.first()
	var targets []scaleTarget
	for _, c := range r.sz.chunks {
		targets = append(targets, scaleTarget{Chunks: c})
	}
	ixs, err := r.scaleIndexes(ctx, m, r.sz.scaleTargets())
	if err != nil {
		return err
	}
	s.Notes = append(s.Notes,
		fmt.Sprintf("In process: `rag.Pipeline.Retrieve` with the defaults (query embedding with the built-in model %s, the first of the run, vector top-%d by the int8 shortlist with its float rescore, FTS5 top-%d, fusion, graph expansion, assembly; no rerank, no generation), %d times over 50 generated questions, after one warm-up pass. The rows below it time its parts alone: the query's embedding, the KNN and the FTS query.", m.label, settings().VectorTopK, settings().FTSTopK, r.sz.queries),
		fmt.Sprintf("The indexes are the generated vault grown until it has the chunks named, built once and cached (~/.cache/vaultask-bench, keyed by the generator's version, the index schema's and the model; a change to the chunker or the full-text setup that adds no migration needs the cache removed). Their vectors are real %s vectors of a pool of generated passages with a little noise (see devtools/bench/embed.go): the built-in model would take half an hour or more to embed 300k chunks here, and a search's cost does not depend on which vector a chunk holds.", m.label),
		"With the follower: a LiveSync follower and the background embedder (as serve runs them) take in 10 notes/s from a database of their own into the same index while the queries run. Baseline: the same queries on the same index alone.",
		fmt.Sprintf("Vector search (index.SearchVector): an int8 copy of every vector in memory (one scale per vector), scanned whole by an AVX2 (amd64) or NEON (arm64) kernel, the scope filtering the scan, picks 2× the top-k candidates, rescored by exact cosine distance on their float vectors. Brute force (SearchVectorExact) is the exact distance to every float vector. Recall@%d is the mean share of brute force's top %d that the shortlist returns, over the 50 questions.", settings().VectorTopK, settings().VectorTopK))
	for i, t := range targets {
		ix := ixs[t]
		// A file of its own per index: a WAL left by the last one must never
		// be read as this one's.
		path := filepath.Join(r.work, fmt.Sprintf("query-%d.db", i))
		if err := copyFile(ix.Path, path); err != nil {
			return err
		}
		store, err := index.Open(ctx, index.Options{Path: path, Space: m.space,
			Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
		if err != nil {
			return err
		}
		label := fmt.Sprintf("%d chunks (%d notes)", ix.Chunks, ix.Notes)
		r.log.Info("retrieval", keyIndex, label)
		alone, err := r.measureRetrieval(ctx, m, store.Search(), store, Questions(50), r.sz.queries, i == len(targets)-1)
		if err != nil {
			store.Close()
			return err
		}
		brute, err := r.measureBruteForce(ctx, m, store)
		if err != nil {
			store.Close()
			return err
		}
		var busy latencies
		err = r.withFollower(ctx, m, store, fmt.Sprintf("q%d", i), 10, func() error {
			var err error
			busy, err = r.measureRetrieval(ctx, m, store.Search(), store, Questions(50), r.sz.queries, false)
			return err
		})
		err = joinErr(err, store.Close())
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			_ = os.Remove(p)
		}
		if err != nil {
			return err
		}
		row := s.dist("retrieval, "+label, "ms", alone.retrieve)
		row.Note = fmt.Sprintf("its vector KNN alone is %.0f%% of it, medians", 100*summarize(alone.knn).Median/row.Summary.Median)
		if t.Chunks == 100000 {
			row.target("p50 < 25 ms at 100k chunks", median, 25, false)
		}
		s.dist("retrieval with the follower writing 10 notes/s, "+label, "ms", busy.retrieve).against("the same index alone", alone.retrieve)
		s.dist("  its query embedding alone, "+label, "ms", alone.embed)
		s.dist("  its vector KNN alone (shortlist), "+label, "ms", alone.knn).against("brute-force KNN alone", brute.knn)
		s.dist("  its FTS query alone, "+label, "ms", alone.fts)
		s.dist("retrieval with brute-force KNN, "+label, "ms", brute.retrieve).against("the shortlist (the first row)", alone.retrieve)
		s.dist("  brute-force KNN alone, "+label, "ms", brute.knn)
		s.add(fmt.Sprintf("  shortlist recall@%d against brute force, %s", settings().VectorTopK, label), "recall", []float64{brute.recall})
		if alone.profile != "" {
			s.Notes = append(s.Notes, fmt.Sprintf("CPU profile of the retrieval loop at %s, taken in a separate pass after the measured one (`go tool pprof -top`):\n\n```\n%s\n```", label, alone.profile))
		}
		r.queryPoints = append(r.queryPoints, queryPoint{chunks: ix.Chunks, notes: ix.Notes, alone: alone.retrieve, busy: busy.retrieve})
	}
	return nil
}

// queryPoint is one index size's retrieval latency, for the charts.
type queryPoint struct {
	chunks, notes int
	alone, busy   []float64
}

// bruteForceResult is brute force measured on one index, and the
// shortlist's recall against it.
type bruteForceResult struct {
	retrieve, knn []float64
	recall        float64
}

// measureBruteForce times retrieval with the brute-force KNN on
// store, that KNN alone, and the shortlist's recall against it.
func (r *run) measureBruteForce(ctx context.Context, m *modelRun, store *index.Store) (bruteForceResult, error) {
	var out bruteForceResult
	lat, err := r.measureRetrieval(ctx, m, bruteForce{store.Search()}, store, Questions(50), r.sz.queries, false)
	if err != nil {
		return out, err
	}
	out.retrieve = lat.retrieve
	emb, err := m.embedder()
	if err != nil {
		return out, err
	}
	vecs, err := queryVectors(ctx, emb, m.space, Questions(50))
	if err != nil {
		return out, err
	}
	k := settings().VectorTopK
	for i := range r.sz.queries {
		t := time.Now()
		if _, err := store.Search().SearchVectorExact(ctx, vecs[i%len(vecs)], k, vault.ScopeAll); err != nil {
			return out, err
		}
		out.knn = append(out.knn, ms(time.Since(t)))
	}
	out.recall, err = vectorRecall(ctx, store, vecs, k, vault.ScopeAll)
	return out, err
}

// vectorRecall is the mean share of SearchVectorExact's top k that
// SearchVector returns, over qs.
func vectorRecall(ctx context.Context, store *index.Store, qs []vault.QueryVector, k int, scope vault.Scope) (float64, error) {
	var sum float64
	for _, q := range qs {
		exact, err := store.Search().SearchVectorExact(ctx, q, k, scope)
		if err != nil {
			return 0, err
		}
		got, err := store.Search().SearchVector(ctx, q, k, scope)
		if err != nil {
			return 0, err
		}
		in := map[int64]bool{}
		for _, h := range exact {
			in[h.RowID] = true
		}
		found := 0
		for _, h := range got {
			if in[h.RowID] {
				found++
			}
		}
		sum += float64(found) / float64(max(len(exact), 1))
	}
	return sum / float64(len(qs)), nil
}
