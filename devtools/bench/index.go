package bench

import (
	"context"
	"encoding/json"
	"fmt"
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
// named name, with the built-in embedder or full text only. With vectors,
// the run is interrupted after the size's vector budget.
func (r *run) indexDB(ctx context.Context, db, name string, vectors bool) (indexed, error) {
	path := filepath.Join(r.work, name+".db")
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(p)
	}
	env := r.couchEnv(db, path, vectors)
	var budget time.Duration
	if vectors {
		budget = r.sz.vectorBudget
	}
	res, err := runChildFor(ctx, budget, r.bin, r.work, env, "index")
	if err != nil {
		return indexed{}, err
	}
	out := indexed{runResult: res, Path: path}
	m := indexedNotes.FindStringSubmatch(res.Stdout)
	if m == nil {
		return out, fmt.Errorf("vaultask index said: %s", res.Stdout)
	}
	out.Notes, _ = strconv.Atoi(m[1])
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
	return runChild(ctx, r.bin, r.work, r.couchEnv(db, filepath.Join(r.work, "dry-run-absent.db"), false), "index", "--dry-run")
}

// rates are the per-run figures of indexing one database.
type rates struct {
	notes, chunks     int
	notesPS, chunksPS []float64
	rss               []float64 // MiB
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

// throughput measures indexing database db runs times, and adds notes/s,
// chunks/s and peak RSS rows named after label, against the read floor.
func (r *run) throughput(ctx context.Context, s *Section, db, label string, vectors bool, runs int) (indexed, rates, error) {
	var last indexed
	var notesPS, chunksPS, rss, wall []float64
	extrapolated := ""
	floor, err := r.floor(ctx, db)
	if err != nil {
		return last, rates{}, err
	}
	for i := range runs {
		name := fmt.Sprintf("%s-%d", strings.ReplaceAll(label, " ", "-"), i)
		if vectors {
			name += "-vec"
		}
		r.log.Info("indexing", keyWhat, label, keyVectors, vectors, keyRun, i+1, keyOf, runs)
		ix, err := r.indexDB(ctx, db, name, vectors)
		if err != nil {
			return last, rates{}, err
		}
		if i > 0 {
			_ = os.Remove(last.Path)
		}
		last = ix
		sec := ix.Wall.Seconds()
		switch {
		case ix.Interrupted && ix.Vectors == 0:
			// No batch of vectors committed within the budget (a smoke
			// run on a busy machine): no rate to extrapolate from.
			extrapolated = fmt.Sprintf("stopped %v after the full-text index, before the first batch of vectors committed: the time is that, not the whole index", r.sz.vectorBudget)
		case ix.Interrupted:
			// Embedding was cut at the budget: the time the whole backlog
			// would take at the rate reached from the full-text index (done
			// at its first line of output) to the signal, the child's
			// shutdown left out.
			fts := ix.FirstLine.Seconds()
			rate := float64(ix.Vectors) / (ix.Signalled.Seconds() - fts)
			sec = fts + float64(ix.Chunks)/rate
			extrapolated = fmt.Sprintf("extrapolated: embedding stopped %v after the full-text index with %d of %d chunks embedded (%.1f chunks/s)", r.sz.vectorBudget, ix.Vectors, ix.Chunks, rate)
		}
		wall = append(wall, sec)
		notesPS = append(notesPS, float64(ix.Notes)/sec)
		chunksPS = append(chunksPS, float64(ix.Chunks)/sec)
		rss = append(rss, mib(ix.PeakRSS))
	}
	mode := "FTS only"
	if vectors {
		mode = "with vectors"
	}
	what := fmt.Sprintf("%s (%d notes, %d chunks), %s", label, last.Notes, last.Chunks, mode)
	row := s.add(what+": wall time", "s", wall).against("reading the vault alone (index --dry-run)", floor)
	row.Note = extrapolated
	if label == r.sz.corpus && !vectors && r.sz.corpus == "hub" {
		row.target("< 20 s", median, 20, false)
	}
	s.add(what+": notes/s", "notes/s", notesPS)
	s.add(what+": chunks/s", "chunks/s", chunksPS)
	s.add(what+": peak RSS of vaultask index", "MiB", rss)
	return last, rates{notes: last.Notes, chunks: last.Chunks, notesPS: notesPS, chunksPS: chunksPS, rss: rss, fileBytes: last.FileBytes, vectors: last.Vectors}, nil
}

func indexThroughput(ctx context.Context, r *run, s *Section) error {
	s.Command = "go run -tags sqlite_fts5 ./devtools/cmd/bench -only 2 -size " + r.cfg.Size
	s.Notes = append(s.Notes,
		"Each run is the real binary, `vaultask index`, from the test CouchDB (express-pouchdb in memory, loaded before the timing) into a fresh index file; wall time is from exec to exit, so it includes process start, the `_all_docs` listing and the vectors when on. Peak RSS is the child's VmHWM (/proc/PID/status), polled every 5 ms.",
		"Baseline: `vaultask index --dry-run` on the same database, which lists, fetches and decodes every document and indexes nothing: reading the vault alone. The ratio is how much indexing costs over that floor.",
		fmt.Sprintf("FTS only: the built-in model directory points at nothing, so no embedder is loaded. With vectors: the built-in USE-lite embedder on all %d cores; the run is interrupted (SIGINT) a budget after the full-text index is done (its first line of output), and the whole time is extrapolated from the embedding rate reached between then and the signal (the vectors committed by exit over that span; the shutdown is not counted): the full-text time plus all chunks at that rate. The generated vault runs once each way (minutes per run): its rows have n = 1.", runtime.NumCPU()))
	if r.cfg.Corpus == "" {
		s.Notes = append(s.Notes, "The corpus (../shared/corpus) is absent: its rows are skipped; the generated vault still runs.")
	} else {
		r.corpusDB = "bench-" + r.sz.corpus
		if err := r.couch.CreateDB(r.corpusDB); err != nil {
			return err
		}
		if _, err := r.couch.Load(r.corpusDB, r.cfg.Corpus, r.sz.corpus); err != nil {
			return err
		}
		fts, ftsRates, err := r.throughput(ctx, s, r.corpusDB, r.sz.corpus, false, r.sz.runs)
		if err != nil {
			return err
		}
		_ = os.Remove(fts.Path)
		vec, vecRates, err := r.throughput(ctx, s, r.corpusDB, r.sz.corpus, true, r.sz.heavyRuns)
		if err != nil {
			return err
		}
		r.corpusIndex, r.corpusNotes = vec.Path, vec.Notes
		if r.completed, vecRates.fileBytes, err = r.completeVectors(ctx, vec.Path); err != nil {
			return err
		}
		r.corpusFTS, r.corpusVec = ftsRates, vecRates
	}
	db := fmt.Sprintf("bench-gen-%d", r.sz.genNotes)
	if _, err := r.loadGenerated(ctx, db, r.sz.genNotes); err != nil {
		return err
	}
	ix, genRates, err := r.throughput(ctx, s, db, fmt.Sprintf("generated %d", r.sz.genNotes), false, 1)
	if err != nil {
		return err
	}
	_ = os.Remove(ix.Path)
	r.genFTS = genRates
	vx, genVec, err := r.throughput(ctx, s, db, fmt.Sprintf("generated %d", r.sz.genNotes), true, 1)
	if err != nil {
		return err
	}
	completed, size, err := r.completeVectors(ctx, vx.Path)
	if err != nil {
		return err
	}
	genVec.fileBytes = size
	if r.corpusIndex != "" {
		_ = os.Remove(vx.Path)
	} else {
		// Without the corpus, the serve sections run on the generated vault.
		r.corpusDB, r.corpusIndex, r.corpusNotes, r.completed = db, vx.Path, vx.Notes, completed
		r.corpusFTS, r.corpusVec = genRates, genVec
		r.sz.corpus = fmt.Sprintf("generated %d", r.sz.genNotes)
	}
	r.genVec = genVec
	return nil
}

// completeVectors gives every chunk of the index at path still waiting for
// a vector one from the pool (see poolEmbedder), so that a server started
// on it has no embedding backlog and its file has the size of a complete
// index (a vector's bytes do not depend on its values): an index run with
// vectors stops at the vector budget. It returns how many chunks it gave
// vectors to and the file's size after.
func (r *run) completeVectors(ctx context.Context, path string) (int, int64, error) {
	pool, err := r.poolVectors(ctx)
	if err != nil {
		return 0, 0, err
	}
	store, err := index.Open(ctx, index.Options{Path: path, Space: builtinSpace,
		Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
	if err != nil {
		return 0, 0, err
	}
	n, err := vectorizer.New(store, poolEmbedder{pool}, vectorizer.Options{BatchChunks: 1000, SliceChunks: 1000, Logger: quiet}).Drain(ctx)
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
