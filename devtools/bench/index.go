package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vectorizer"
)

// indexed is one `vaultask index` run into a fresh index.
type indexed struct {
	runResult
	Path          string
	Notes, Chunks int
	Vectors       int
	FileBytes     int64
}

var indexedNotes = regexp.MustCompile(`indexed (\d+) notes`)

// indexDB runs `vaultask index` from database db into a fresh index file
// named name, with the built-in model m as its embedder, or full text only
// when m is nil. With vectors, the run is interrupted after the size's
// vector budget.
func (r *run) indexDB(ctx context.Context, db, name string, m *modelRun) (indexed, error) {
	path := filepath.Join(r.work, name+".db")
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(p)
	}
	env := r.couchEnv(db, path, m)
	var budget time.Duration
	if m != nil {
		budget = r.sz.vectorBudget
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", embedCores()))
	}
	res, err := runChildFor(ctx, budget, r.bin, r.work, env, "index")
	if err != nil {
		return indexed{}, err
	}
	out := indexed{runResult: res, Path: path}
	mt := indexedNotes.FindStringSubmatch(res.Stdout)
	if mt == nil {
		return out, fmt.Errorf("vaultask index said: %s", res.Stdout)
	}
	out.Notes, _ = strconv.Atoi(mt[1])
	st, err := runChild(ctx, r.bin, r.work, env, "stats", "--json")
	if err != nil {
		return out, err
	}
	var stats struct {
		Chunks    int   `json:"chunks"`
		Vectors   int   `json:"vectors"`
		FileBytes int64 `json:"file_bytes"`
	}
	if err := json.Unmarshal([]byte(st.Stdout), &stats); err != nil {
		return out, fmt.Errorf("stats --json: %w: %s", err, st.Stdout)
	}
	out.Chunks, out.Vectors = stats.Chunks, stats.Vectors
	out.FileBytes, err = fileSize(path)
	return out, err
}

// embedCores is how many cores an index run with vectors runs on (its
// GOMAXPROCS): two, as issue 35's target has it (the hub corpus fully
// embedded in < 20 min on 2 cores, a small NAS), or fewer on a smaller
// machine. SQLite's own calls (cgo) are not held to it.
func embedCores() int { return min(2, runtime.NumCPU()) }

// backlogText is the text of the chunks of the index at path that have no
// vector yet: in an index without vectors, every chunk's. It reads the
// index as it was classified: a read-only open that reclassifies first
// opens the file for writing with the space it is given, and for an index
// of another model that makes the given space the one to fill and clears
// every chunk's embedded mark (an e5 index read so showed its whole text
// still waiting).
func backlogText(ctx context.Context, path string) (int64, error) {
	store, err := index.Open(ctx, index.Options{Path: path, Space: useLite.space, ReadOnly: true, AsClassified: true, Logger: quiet})
	if err != nil {
		return 0, err
	}
	defer store.Close()
	pending, err := store.Vectors().Backlog(ctx, math.MaxInt32, math.MaxInt32)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, p := range pending {
		n += int64(len(p.Text))
	}
	return n, nil
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// readFloor is `vaultask index --dry-run` on a fresh index: the whole
// database listed, fetched and decoded, nothing indexed. It is what reading
// the vault from CouchDB costs alone, the floor under any index time.
func (r *run) readFloor(ctx context.Context, db string) (runResult, error) {
	return runChild(ctx, r.bin, r.work, r.couchEnv(db, filepath.Join(r.work, "dry-run-absent.db"), nil), "index", "--dry-run")
}

// rates are the per-run figures of indexing one database.
type rates struct {
	notes, chunks           int
	wall, notesPS, chunksPS []float64
	// embedPS is the embedding rate alone, with vectors: the chunks
	// embedded over the time from the full-text index to the signal.
	embedPS []float64
	rss     []float64 // MiB
	// fileBytes is the index file's size; with vectors, measured after
	// completeVectors, when every chunk has one, of which the last run
	// embedded vectors with the built-in model.
	fileBytes int64
	vectors   int
}

// floor is readFloor's wall time on db, measured twice the first time it is
// asked for and then reused: it does not depend on what is indexed.
func (r *run) floor(ctx context.Context, db string) ([]float64, error) {
	if f, ok := r.floors[db]; ok {
		return f, nil
	}
	var f []float64
	for range min(r.sz.runs, 2) {
		res, err := r.readFloor(ctx, db)
		if err != nil {
			return nil, err
		}
		f = append(f, res.Wall.Seconds())
	}
	r.floors[db] = f
	return f, nil
}

// throughput measures indexing database db runs times, full text only (m
// nil) or with model m's vectors, and adds wall time, notes/s, chunks/s and
// peak RSS rows named after label (with vectors also the embedding rate),
// the wall time against the read floor, or, given base (the first model's
// rates on the same database, for another model), the wall time, the
// embedding rate and the peak RSS against base's.
func (r *run) throughput(ctx context.Context, s *Section, db, label string, m *modelRun, runs int, base *rates) (indexed, rates, error) {
	floor, err := r.floor(ctx, db)
	if err != nil {
		return indexed{}, rates{}, err
	}
	mode := "FTS only"
	if m != nil {
		mode = "with vectors (" + m.label + ")"
	}
	var x rates
	var last indexed
	var note string
	for i := range runs {
		name := fmt.Sprintf("%s-%d", strings.ReplaceAll(label, " ", "-"), i)
		if m != nil {
			name += "-" + m.name
		}
		r.log.Info("indexing", keyWhat, label, keyMode, mode, keyRun, i+1, keyOf, runs)
		ix, err := r.indexDB(ctx, db, name, m)
		if err != nil {
			return last, rates{}, err
		}
		if i > 0 {
			_ = os.Remove(last.Path)
		}
		last = ix
		if note, err = r.addRun(ctx, db, ix, m, &x); err != nil {
			return last, rates{}, err
		}
	}
	x.notes, x.chunks, x.fileBytes, x.vectors = last.Notes, last.Chunks, last.FileBytes, last.Vectors
	what := fmt.Sprintf("%s (%d notes, %d chunks), %s", label, last.Notes, last.Chunks, mode)
	r.throughputRows(s, what, label, m, x, floor, base).Note = note
	return last, x, nil
}

// addRun adds index run ix of database db to x: with vectors (m not nil)
// its whole time extrapolated, and the note saying how; without, it reads
// the text of the chunks the first time.
func (r *run) addRun(ctx context.Context, db string, ix indexed, m *modelRun, x *rates) (string, error) {
	sec, note := ix.Wall.Seconds(), ""
	if m == nil {
		if _, ok := r.textBytes[db]; !ok {
			n, err := backlogText(ctx, ix.Path)
			if err != nil {
				return "", err
			}
			r.textBytes[db] = n
		}
	} else {
		var rate float64
		var err error
		if sec, rate, note, err = r.extrapolate(ctx, db, ix); err != nil {
			return "", err
		}
		x.embedPS = append(x.embedPS, rate)
	}
	x.wall = append(x.wall, sec)
	x.notesPS = append(x.notesPS, float64(ix.Notes)/sec)
	x.chunksPS = append(x.chunksPS, float64(ix.Chunks)/sec)
	x.rss = append(x.rss, mib(ix.PeakRSS))
	return note, nil
}

// throughputRows adds the rows of x, named after what, and returns the
// wall time's: against the read floor, or, given base (the first model's
// rates), the wall time, embedding rate and peak RSS against base's.
func (r *run) throughputRows(s *Section, what, label string, m *modelRun, x rates, floor []float64, base *rates) *Row {
	row := s.add(what+": wall time", "s", x.wall)
	if base == nil {
		row.against("reading the vault alone (index --dry-run)", floor)
	}
	if label == r.sz.corpus && r.sz.corpus == "hub" {
		if m == nil {
			row.target("< 20 s", median, 20, false)
		} else {
			row.target(fmt.Sprintf("< 20 min (fully embedded on 2 cores; here on %d)", embedCores()), median, 20*60, false)
		}
	}
	s.add(what+": notes/s", "notes/s", x.notesPS)
	s.add(what+": chunks/s", "chunks/s", x.chunksPS)
	var er *Row
	if m != nil {
		er = s.add(what+": embedding rate", "chunks/s", x.embedPS)
	}
	pr := s.add(what+": peak RSS of vaultask index", "MiB", x.rss)
	if base != nil {
		row.against(r.sameRun(" with vectors"), base.wall)
		er.against(r.sameRun(""), base.embedPS)
		pr.against(r.sameRun(""), base.rss)
	}
	return row
}

// extrapolate returns the whole time of index run ix with vectors, and its
// embedding rate. A run cut at the vector budget did the full-text index
// (until its first line of output) and then embedded part of the backlog
// until the signal (the shutdown left out): its whole time is the full-text
// time plus that embedding time scaled by the share of the text (the
// chunks' bytes, read from the index) it embedded, since a model's time
// goes with the length of what it embeds and the backlog is not in order of
// length. note says how the time was made, and the share by chunks beside
// the share by text.
func (r *run) extrapolate(ctx context.Context, db string, ix indexed) (sec, rate float64, note string, err error) {
	fts := ix.FirstLine.Seconds()
	if !ix.Interrupted {
		return ix.Wall.Seconds(), float64(ix.Vectors) / max(ix.Wall.Seconds()-fts, 1e-3), "", nil
	}
	if ix.Vectors == 0 {
		// No batch of vectors committed within the budget (a smoke run on
		// a busy machine): no rate to extrapolate from.
		return ix.Wall.Seconds(), 0, fmt.Sprintf("stopped %v after the full-text index, before the first batch of vectors committed: the time is that, not the whole index", r.sz.vectorBudget), nil
	}
	span := ix.Signalled.Seconds() - fts
	rate = float64(ix.Vectors) / span
	left, err := backlogText(ctx, ix.Path)
	if err != nil {
		return 0, 0, "", err
	}
	total := r.textBytes[db]
	if total <= left {
		// The full-text run that reads the whole text did not run first.
		return fts + float64(ix.Chunks)/rate, rate, fmt.Sprintf("extrapolated by chunks: embedding stopped %v after the full-text index with %d of %d chunks embedded (%.1f chunks/s)", r.sz.vectorBudget, ix.Vectors, ix.Chunks, rate), nil
	}
	done := float64(total-left) / float64(total)
	sec = fts + span/done
	note = fmt.Sprintf("extrapolated: embedding stopped %v after the full-text index with %d of %d chunks (%.1f%%) embedded, %.1f%% of their text (%.1f chunks/s); by chunks it would be %.0f s", r.sz.vectorBudget, ix.Vectors, ix.Chunks, 100*float64(ix.Vectors)/float64(ix.Chunks), 100*done, rate, fts+float64(ix.Chunks)/rate)
	return sec, rate, note, nil
}

func indexThroughput(ctx context.Context, r *run, s *Section) error {
	s.Command = r.reproduce("2")
	s.Notes = append(s.Notes,
		"Each run is the real binary, `vaultask index`, from the test CouchDB (express-pouchdb in memory, loaded before the timing) into a fresh index file; wall time is from exec to exit, so it includes process start, the `_all_docs` listing and the vectors when on. Peak RSS is the child's VmHWM (/proc/PID/status), polled every 5 ms.",
		"Baseline: `vaultask index --dry-run` on the same database, which lists, fetches and decodes every document and indexes nothing: reading the vault alone. The ratio is how much indexing costs over that floor.",
		fmt.Sprintf("FTS only: the built-in model directory points at nothing, so no embedder is loaded. With vectors: each built-in model in turn (%s; models.embedding set to it), on %d cores (GOMAXPROCS=%d, the issue's target's 2 cores or fewer on a smaller machine, of the machine's %d; e5 embeds passages on threads of the lowest priority, internal/lowprio, as index and serve run it: alone on the machine that costs it nothing). The run is interrupted (SIGINT) a budget after the full-text index is done (its first line of output), and the whole time is extrapolated from the embedding reached between then and the signal (the vectors committed by exit over that span; the shutdown is not counted): the full-text time plus the time to embed all the chunks' text at that rate, by text rather than by chunks since the embedding time goes with the text's length (each row's note gives the share embedded both ways). The embedding rate is those chunks over that span. A model after the first is compared with the first in the same run (its wall time, embedding rate and peak RSS). The generated vault runs once each way (minutes per run): its rows have n = 1.", r.modelLabels(), embedCores(), embedCores(), runtime.NumCPU()))
	if r.cfg.Corpus == "" {
		s.Notes = append(s.Notes, "The corpus (../shared/corpus) is absent: its rows are skipped; the generated vault still runs.")
	} else if err := r.corpusThroughput(ctx, s); err != nil {
		return err
	}
	return r.generatedThroughput(ctx, s)
}

// corpusThroughput loads the corpus into the test CouchDB and indexes it
// full text only, then with each model's vectors; each model's last index,
// completed with pool vectors, is the one the serve sections start on.
func (r *run) corpusThroughput(ctx context.Context, s *Section) error {
	r.corpusDB = "bench-" + r.sz.corpus
	if err := r.couch.CreateDB(r.corpusDB); err != nil {
		return err
	}
	if _, err := r.couch.Load(r.corpusDB, r.cfg.Corpus, r.sz.corpus); err != nil {
		return err
	}
	fts, ftsRates, err := r.throughput(ctx, s, r.corpusDB, r.sz.corpus, nil, r.sz.runs, nil)
	if err != nil {
		return err
	}
	_ = os.Remove(fts.Path)
	r.corpusFTS = ftsRates
	for i, m := range r.models {
		vec, vecRates, err := r.throughput(ctx, s, r.corpusDB, r.sz.corpus, m, r.sz.heavyRuns, r.firstRates(i, func(f *modelRun) rates { return f.corpusVec }))
		if err != nil {
			return err
		}
		m.corpusIndex, r.corpusNotes = vec.Path, vec.Notes
		if m.completed, vecRates.fileBytes, err = r.completeVectors(ctx, m, vec.Path); err != nil {
			return err
		}
		m.corpusVec = vecRates
	}
	return nil
}

// generatedThroughput indexes the generated vault once full text only and
// once with each model's vectors. Without the corpus, each model's index
// of it is the one the serve sections start on.
func (r *run) generatedThroughput(ctx context.Context, s *Section) error {
	db := fmt.Sprintf("bench-gen-%d", r.sz.genNotes)
	if _, err := r.loadGenerated(ctx, db, r.sz.genNotes); err != nil {
		return err
	}
	label := fmt.Sprintf("generated %d", r.sz.genNotes)
	ix, genRates, err := r.throughput(ctx, s, db, label, nil, 1, nil)
	if err != nil {
		return err
	}
	_ = os.Remove(ix.Path)
	r.genFTS = genRates
	for i, m := range r.models {
		vx, genVec, err := r.throughput(ctx, s, db, label, m, 1, r.firstRates(i, func(f *modelRun) rates { return f.genVec }))
		if err != nil {
			return err
		}
		completed, size, err := r.completeVectors(ctx, m, vx.Path)
		if err != nil {
			return err
		}
		genVec.fileBytes = size
		m.genVec = genVec
		if r.cfg.Corpus != "" {
			_ = os.Remove(vx.Path)
			continue
		}
		m.corpusIndex, m.completed, m.corpusVec = vx.Path, completed, genVec
		r.corpusDB, r.corpusNotes, r.corpusFTS = db, vx.Notes, genRates
	}
	if r.cfg.Corpus == "" {
		r.sz.corpus = label
	}
	return nil
}

// firstRates is what of the first model's rates the i-th model's are
// compared with: none for the first.
func (r *run) firstRates(i int, of func(*modelRun) rates) *rates {
	if i == 0 {
		return nil
	}
	x := of(r.first())
	return &x
}

// completeVectors gives every chunk of the index at path still waiting for
// a vector one of model m's pool (see poolEmbedder), so that a server
// started on it has no embedding backlog and its file has the size of a
// complete index (a vector's bytes do not depend on its values): an index
// run with vectors stops at the vector budget. It returns how many chunks
// it gave vectors to and the file's size after.
func (r *run) completeVectors(ctx context.Context, m *modelRun, path string) (int, int64, error) {
	pool, err := m.poolVectors(ctx, r)
	if err != nil {
		return 0, 0, err
	}
	store, err := index.Open(ctx, index.Options{Path: path, Space: m.space,
		Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
	if err != nil {
		return 0, 0, err
	}
	n, err := vectorizer.New(store.Vectors(), poolEmbedder{pool}, vectorizer.Options{BatchChunks: 1000, SliceChunks: 1000, Logger: quiet}).Drain(ctx)
	if err != nil {
		store.Close()
		return 0, 0, err
	}
	if err := store.Close(); err != nil { // folds the WAL into the file
		return 0, 0, err
	}
	size, err := fileSize(path)
	return n, size, err
}
