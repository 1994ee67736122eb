package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vaultask/vaultask/tstest/couchtest"
	"github.com/vaultask/vaultask/tstest/fakellm"
	"github.com/vaultask/vaultask/tstest/livesyncput"
)

// Config says what to run and where.
type Config struct {
	// Size is "full" (the published figures) or "smoke" (every scenario at
	// a tiny size, so the code cannot rot).
	Size string
	// Out is where BENCHMARKS.md and bench/ are written.
	Out string
	// Root is the module root (for go build); Corpus the directory of the
	// corpus dumps, "" when absent; Cache holds the generated indexes
	// between runs.
	Root, Corpus, Cache string
	// Only, when not empty, runs just these sections (by ID, "1" to "8").
	Only []string
	// Chunks, when not empty, replaces the size's scale indexes (sections 3
	// and 8) by these chunk counts: a re-run of one point skips building
	// and timing the others.
	Chunks []int
	// Loads and Edits, when set, replace the size's background loads
	// (notes/s) and measured edits per load of section 1: a freshness
	// check at one load, shorter than the full sweep.
	Loads []int
	Edits int
	// Models are the built-in embedding models measured, by the names
	// `vaultask fetch-model` takes ("use-lite", "e5", "bge"); empty is
	// DefaultModels. The sections that cost a model (1, 2, 4, 5 and 7) run
	// once per model, each after the first compared with the first in the
	// same run; 3, 6 and 8 run on the first.
	Models []string
	// Clean refuses to run on a work tree with uncommitted changes (to
	// tracked files), whose figures no commit would reproduce; without it
	// such a run is marked "-dirty" in the report.
	Clean bool
	// Log receives progress lines.
	Log io.Writer
}

// sizes are a run's dimensions.
type sizes struct {
	runs      int // repeated runs of a cheap measurement
	heavyRuns int // repeated runs of an expensive one
	corpus    string
	edits     int
	loads     []int
	// bigNotes are the sizes of the big notes section 1 writes small notes
	// behind, behind of each.
	bigNotes []int
	behind   int
	period   time.Duration // the baseline's _all_docs diff period
	genNotes int           // the generated vault of section 2
	// vectorBudget bounds an index run with vectors: past it the run is
	// interrupted and its time extrapolated from the rate it reached.
	vectorBudget time.Duration
	curve        []int // scale curve, in notes
	chunks       []int // retrieval latency, in chunks
	queries      int
	ttft         int
	clients      []int
	clientFor    time.Duration
	embedN       int
	fetch        bool   // time `vaultask fetch-model` (it downloads: not in tests)
	pool         int    // passages of the scale indexes' vector pool
	growth       [3]int // notes, notes edited per cycle, cycles
	idle         time.Duration
	// settle is how long after section 7's load burst serve's resident
	// set is read again.
	settle time.Duration
}

var sizeTable = map[string]sizes{
	"full": {runs: 3, heavyRuns: 2, corpus: "hub", edits: 100, loads: []int{0, 10, 50}, period: 10 * time.Second,
		bigNotes: []int{200 << 10, 5 << 20}, behind: 20,
		genNotes: 50000, vectorBudget: 90 * time.Second, curve: []int{1000, 5000, 10000, 50000}, chunks: []int{10000, 100000, 300000},
		queries: 200, ttft: 100, clients: []int{1, 10, 50}, clientFor: 15 * time.Second, embedN: 128, fetch: true, pool: 512,
		growth: [3]int{2500, 100, 100}, idle: 10 * time.Second, settle: time.Minute},
	"smoke": {runs: 1, heavyRuns: 1, corpus: "help", edits: 3, loads: []int{0, 10}, period: 500 * time.Millisecond,
		bigNotes: []int{20 << 10}, behind: 2,
		genNotes: 200, vectorBudget: 7 * time.Second, curve: []int{60, 150}, chunks: []int{300, 600},
		queries: 8, ttft: 3, clients: []int{1, 3}, clientFor: time.Second, embedN: 4, pool: 8,
		growth: [3]int{60, 10, 5}, idle: 300 * time.Millisecond, settle: time.Second},
}

// scaleTargets are every scale index a run uses (sections 3 and 8), built
// in one pass.
func (sz sizes) scaleTargets() []scaleTarget {
	var ts []scaleTarget
	for _, c := range sz.chunks {
		ts = append(ts, scaleTarget{Chunks: c})
	}
	for _, n := range sz.curve {
		ts = append(ts, scaleTarget{Notes: n})
	}
	return ts
}

// run is one benchmark run's shared state.
type run struct {
	cfg   Config
	sz    sizes
	log   *slog.Logger
	work  string // scratch directory, removed at the end
	bin   string
	couch *couchtest.Server
	// models are the built-in models measured, the first the one the
	// others are compared with; each holds its corpus index (section 2).
	models      []*modelRun
	corpusDB    string
	corpusNotes int
	// What section 2 measured without vectors, for the footprint and the
	// scale curve; textBytes is the text of every chunk of a database's
	// index, what an embedder reads.
	corpusFTS, genFTS rates
	textBytes         map[string]int64
	// demoNotes is how many notes of the demo vault demoDB holds, once
	// loaded.
	demoNotes int
	// serve is the server sections 7, 5, 6 and 1 share while they measure
	// the same model (serveModel); upstream its fake generation model.
	serve      *server
	serveModel *modelRun
	serves     int
	upstream   *fakellm.Server
	// floors are readFloor's times per database.
	floors map[string][]float64
	// queryPoints are section 3's sizes, for the scale curve.
	queryPoints []queryPoint
}

type scenario struct {
	id, title string
	fn        func(ctx context.Context, r *run, s *Section) error
}

// Run runs the benchmarks and writes the report files.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	sz, ok := sizeTable[cfg.Size]
	if !ok {
		return nil, fmt.Errorf("unknown size %q (full or smoke)", cfg.Size)
	}
	if len(cfg.Chunks) > 0 {
		sz.chunks = cfg.Chunks
	}
	if len(cfg.Loads) > 0 {
		sz.loads = cfg.Loads
	}
	if cfg.Edits > 0 {
		sz.edits = cfg.Edits
	}
	if len(cfg.Models) == 0 {
		cfg.Models = DefaultModels
	}
	models, err := modelsNamed(cfg.Models)
	if err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	rep := &Report{Size: cfg.Size, Started: time.Now(), Machine: machine(), Command: command(cfg)}
	rep.Commit, rep.Dirty = commit(cfg.Root)
	if cfg.Clean && rep.Dirty {
		return nil, fmt.Errorf("%w: %s at %s; commit them, or measure with -dirty (the report then marks the run)", ErrDirtyTree, cfg.Root, rep.Commit)
	}
	sectionCommit := rep.Commit
	if rep.Dirty {
		sectionCommit += "-dirty"
	}
	r := &run{cfg: cfg, sz: sz, models: models, floors: map[string][]float64{}, textBytes: map[string]int64{},
		log: slog.New(slog.NewTextHandler(cfg.Log, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	if r.work, err = os.MkdirTemp("", "vaultask-bench-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(r.work)
	r.log.Info("building vaultask")
	if r.bin, err = BuildBinary(ctx, cfg.Root, r.work); err != nil {
		return nil, err
	}
	couch, stop, err := couchtest.Launch()
	if err != nil {
		return nil, err
	}
	defer stop()
	r.couch = couch
	r.upstream = fakellm.New()
	defer r.upstream.Close()
	r.upstream.SetReply(func([]fakellm.Message) string { return reply })
	defer func() { _ = r.stopServe() }()
	for _, sc := range scenarios() {
		if len(cfg.Only) > 0 && !slices.Contains(cfg.Only, sc.id) {
			continue
		}
		sec := &Section{ID: sc.id, Title: sc.title, Started: time.Now(), Commit: sectionCommit, Machine: rep.Machine}
		rep.Sections = append(rep.Sections, sec)
		r.log.Info("section", keyID, sc.id, keyTitle, sc.title)
		start := time.Now()
		var skip *skipError
		switch err := sc.fn(ctx, r, sec); {
		case errors.As(err, &skip):
			sec.Skipped = skip.why
			r.log.Warn("skipped", keySection, sc.id, keyWhy, skip.why)
		case err != nil:
			return rep, fmt.Errorf("section %s (%s): %w", sc.id, sc.title, err)
		}
		sec.Seconds = time.Since(start).Seconds()
	}
	slices.SortFunc(rep.Sections, func(a, b *Section) int { return strings.Compare(a.ID, b.ID) })
	rep.Seconds = time.Since(rep.Started).Seconds()
	if len(cfg.Only) > 0 {
		rep.mergeInto(cfg.Out, r.log)
	}
	return rep, rep.WriteFiles(cfg.Out)
}

// command is the command line that reproduces a run of cfg.
func command(cfg Config) string {
	c := fmt.Sprintf("go run -tags sqlite_fts5 ./devtools/cmd/bench -size %s -out %s", cfg.Size, cfg.Out)
	if len(cfg.Only) > 0 {
		c += " -only " + strings.Join(cfg.Only, ",")
	}
	if len(cfg.Chunks) > 0 {
		c += " -chunks " + joinInts(cfg.Chunks)
	}
	if len(cfg.Loads) > 0 {
		c += " -loads " + joinInts(cfg.Loads)
	}
	if cfg.Edits > 0 {
		c += " -edits " + strconv.Itoa(cfg.Edits)
	}
	return c + " -models " + strings.Join(cfg.Models, ",")
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// The sections run in this order: the corpus indexes of 2 (one per model)
// are the existing indexes that 7, 5, 6 and 1 serve from.
func scenarios() []scenario {
	return []scenario{
		{"2", "Initial index throughput", indexThroughput},
		{"7", "Footprint", footprint},
		{"5", "Time to first token added by vaultask", timeToFirstToken},
		{"6", "Concurrent streaming clients", concurrency},
		{"1", "Freshness: a LiveSync write to searchable through `vaultask serve`", freshness},
		{"3", "Retrieval latency", retrievalLatency},
		{"4", "Built-in embedder throughput", embedderThroughput},
		{"8", "Scale curve", scaleCurve},
	}
}

// ErrDirtyTree is Run's error for a work tree with uncommitted changes when
// Config.Clean is set.
var ErrDirtyTree = errors.New("the work tree has uncommitted changes")

// skipError is a section that cannot run here, with why.
type skipError struct{ why string }

func (e *skipError) Error() string { return e.why }

func skipf(format string, args ...any) error { return &skipError{fmt.Sprintf(format, args...)} }

// couchEnv points a vaultask child at database db of the test server, with
// the built-in model m as its embedder, or none (full text only) when m is
// nil.
func (r *run) couchEnv(db, indexPath string, m *modelRun, extra ...string) []string {
	env := childEnv(
		"VAULTASK_VAULT__URL="+r.couch.URL, "VAULTASK_VAULT__DATABASE="+db,
		"VAULTASK_VAULT__USER="+r.couch.User, "VAULTASK_VAULT__PASSWORD="+r.couch.Password,
		"VAULTASK_INDEX__PATH="+indexPath, "VAULTASK_SENSITIVITY__PERSONAL_PATHS="+PersonalPaths)
	if m == nil {
		env = append(env, "VAULTASK_MODELS__BUILTIN_DIR="+filepath.Join(r.work, "no-model-here"))
	} else {
		env = append(env, "VAULTASK_MODELS__EMBEDDING="+m.id, "VAULTASK_MODELS__BUILTIN_DIR="+builtinDir())
	}
	return append(env, extra...)
}

// loadGenerated creates database db holding the generated vault of n notes.
func (r *run) loadGenerated(ctx context.Context, db string, n int) (int, error) {
	if err := r.couch.CreateDB(db); err != nil {
		return 0, err
	}
	lp := &livesyncput.Client{DB: r.couch.DBURL(db), User: r.couch.User, Password: r.couch.Password, HTTP: httpClient}
	notes := Generate(n)
	for batch := range slices.Chunk(notes, 250) {
		if err := lp.PutNew(ctx, batch); err != nil {
			return 0, err
		}
	}
	return len(notes), nil
}

func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %f kB", &kb); err == nil {
			m.MemoryGB = kb / (1 << 20)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// commit is the checked-out commit of the repository at root and whether
// the work tree has changes.
func commit(root string) (string, bool) {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown", false
	}
	st, _ := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), len(strings.TrimSpace(string(st))) > 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }
