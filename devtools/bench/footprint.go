package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

func footprint(ctx context.Context, r *run, s *Section) error {
	s.Command = r.reproduce("2,7")
	s.Notes = append(s.Notes,
		"Start to ready: exec of `vaultask serve` on a copy of the index section 2 built with the model (vectors included, its feed checkpoint current) until `/readyz` answers 200. Baseline: `vaultask stats` on the same index, which starts the binary, opens the index and reads it: the floor of any start.",
		fmt.Sprintf("Idle RSS: VmRSS of that server %v after it is ready, nothing asked. Then a load burst: for %v, %d clients stream chat answers back to back through `/v1/chat/completions` (the questions of section 5, the fake upstream answering) while %d MCP clients call `vault_search` back to back, each with questions of its own (%d in all, none asked twice); VmRSS is read as the burst ends and %v after. The edit-cycle rows use the index package directly with a deterministic stand-in embedder of %s's dimension (file size does not depend on the vectors' values).", r.sz.idle, r.sz.clientFor, burstClients, burstClients, burstQuestions, r.sz.settle, r.first().label),
		"A model after the first is compared with the first in the same run, where the first's figure has a baseline of its own.")
	fi, err := os.Stat(r.bin)
	if err != nil {
		return err
	}
	s.add("binary size (scripts/build-release.sh: -trimpath, -ldflags \"-s -w\", as released)", "MiB", []float64{mib(fi.Size())})
	if err := r.modelSizes(s); err != nil {
		return err
	}
	if err := r.firstStart(ctx, s); err != nil {
		return err
	}
	if err := r.noCorpusIndex(); err != nil {
		return err
	}
	var completed []string
	for _, m := range r.models {
		if m.completed > 0 {
			completed = append(completed, fmt.Sprintf("%d chunks of %s's", m.completed, m.label))
		}
	}
	if len(completed) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("Section 2's index runs with vectors stopped at their budget; the chunks they had not embedded (%s) got pool vectors of the same model (see section 3) so that serve starts with no embedding backlog, as on a vault indexed long ago. Sections 5, 6 and 1 start from the same indexes.", strings.Join(completed, ", ")))
	}
	if err := r.serveFootprint(ctx, s); err != nil {
		return err
	}
	corpus := func(m *modelRun) rates { return m.corpusVec }
	s.add("peak RSS indexing "+r.sz.corpus+", FTS only", "MiB", r.corpusFTS.rss)
	r.eachModel(s, corpus, "MiB", func(x rates) []float64 { return x.rss },
		func(m *modelRun, _ rates) string {
			return fmt.Sprintf("peak RSS indexing %s, with vectors of %s", r.sz.corpus, m.label)
		})
	per1k := func(x rates) []float64 { return []float64{mib(x.fileBytes) * 1000 / float64(x.notes)} }
	s.add(fmt.Sprintf("index file per 1k notes, %s, FTS only", r.sz.corpus), "MiB", per1k(r.corpusFTS))
	r.eachModel(s, corpus, "MiB", per1k, func(m *modelRun, x rates) string {
		return fmt.Sprintf("index file per 1k notes, %s, %s", r.sz.corpus, withVectors(m, x))
	})
	s.add(fmt.Sprintf("index file per 1k notes, generated %d, FTS only", r.genFTS.notes), "MiB", per1k(r.genFTS))
	r.eachModel(s, func(m *modelRun) rates { return m.genVec }, "MiB", per1k, func(m *modelRun, x rates) string {
		return fmt.Sprintf("index file per 1k notes, generated %d, %s", x.notes, withVectors(m, x))
	})
	g := r.sz.growth
	clean, final, err := editCycles(ctx, filepath.Join(r.work, "growth.db"), r.first().space, g[0], g[1], g[2])
	if err != nil {
		return err
	}
	s.add(fmt.Sprintf("index file after %d edit cycles of %d notes (%d-note vault)", g[2], g[1], g[0]), "MiB", []float64{mib(final)}).
		against("the same index clean", []float64{mib(clean)})
	return nil
}

// serveFootprint measures serve's start and idle memory on each model's
// corpus index; the last model's last server stays up for the sections
// after.
func (r *run) serveFootprint(ctx context.Context, s *Section) error {
	var firstReady, firstIdle []float64
	for i, m := range r.models {
		var ready, floor, idle, floorRSS, burst, settled []float64
		for k := range r.sz.runs {
			st, err := runChild(ctx, r.bin, r.work, r.serveEnv(m, m.corpusIndex), "stats", "--json")
			if err != nil {
				return err
			}
			floor = append(floor, ms(st.Wall))
			floorRSS = append(floorRSS, mib(st.PeakRSS))
			srv, err := r.serveFor(ctx, m)
			if err != nil {
				return err
			}
			ready = append(ready, ms(srv.Ready))
			time.Sleep(r.sz.idle)
			rss, err := srv.RSS()
			if err != nil {
				return err
			}
			idle = append(idle, mib(rss))
			end, after, err := r.loadBurst(ctx, srv)
			if err != nil {
				return err
			}
			burst, settled = append(burst, mib(end)), append(settled, mib(after))
			if k < r.sz.runs-1 {
				if err := r.stopServe(); err != nil {
					return err
				}
			}
		}
		rr := s.add(fmt.Sprintf("start to ready on the existing %s index, %s", r.sz.corpus, m.label), "ms", ready).target("< 1 s", median, 1000, false)
		ir := s.add("idle RSS of vaultask serve, "+m.label, "MiB", idle).target("< 150 MB", median, 150*1e6/(1<<20), false)
		s.add("RSS of vaultask serve at the end of the load burst, "+m.label, "MiB", burst).against("idle RSS before it", idle)
		s.add(fmt.Sprintf("RSS of vaultask serve %v after the load burst, %s", r.sz.settle, m.label), "MiB", settled).
			against("idle RSS before it", idle).target("< 150 MB", median, 150*1e6/(1<<20), false)
		if i == 0 {
			rr.against("vaultask stats on it", floor)
			ir.against("peak RSS of vaultask stats", floorRSS)
			firstReady, firstIdle = ready, idle
		} else {
			rr.against(r.sameRun(""), firstReady)
			ir.against(r.sameRun(""), firstIdle)
		}
	}
	return nil
}

// The load burst of section 7: burstClients chat clients and as many MCP
// clients, the MCP clients sharing burstQuestions questions.
const (
	burstClients   = 4
	burstQuestions = 2000
)

// loadBurst runs section 7's load burst against srv and returns its
// resident set as the burst ends and r.sz.settle after.
func (r *run) loadBurst(ctx context.Context, srv *server) (end, after int64, err error) {
	qs := Questions(burstQuestions)
	var next atomic.Int64
	var searches atomic.Int64
	stop := time.Now().Add(r.sz.clientFor)
	g, gctx := errgroup.WithContext(ctx)
	for range burstClients {
		g.Go(func() error {
			mcp, err := newMCP(gctx, srv.URL)
			if err != nil {
				return err
			}
			for time.Now().Before(stop) {
				i := next.Add(1) - 1
				if i >= int64(len(qs)) {
					return nil
				}
				if _, err := mcp.search(gctx, qs[i], 10); err != nil {
					return fmt.Errorf("load burst: %w", err)
				}
				searches.Add(1)
			}
			return nil
		})
	}
	chat := clientLoad(gctx, burstClients, r.sz.clientFor, srv.URL+"/v1", "vault-ask", r.questions())
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	if chat.errors > 0 || searches.Load() == 0 {
		return 0, 0, fmt.Errorf("load burst: %d answers refused (first: %s), %d searches", chat.errors, chat.firstErr, searches.Load())
	}
	if end, err = srv.RSS(); err != nil {
		return 0, 0, err
	}
	time.Sleep(r.sz.settle)
	after, err = srv.RSS()
	return end, after, err
}

// eachModel adds a row per model, named by name, of what value reads from
// the model's rates (which picks them), the rows after the first against
// the first's.
func (r *run) eachModel(s *Section, which func(*modelRun) rates, unit string, value func(rates) []float64, name func(*modelRun, rates) string) {
	for i, m := range r.models {
		x := which(m)
		row := s.add(name(m, x), unit, value(x))
		if i > 0 {
			row.against(r.sameRun(""), value(which(r.first())))
		}
	}
}

// withVectors says what vectors an index of model m holds.
func withVectors(m *modelRun, x rates) string {
	if x.vectors >= x.chunks {
		return fmt.Sprintf("with vectors of %s, all %d chunks embedded by the model", m.label, x.chunks)
	}
	return fmt.Sprintf("with vectors of %s, all %d chunks: %d embedded by the model before the budget, the rest pool vectors", m.label, x.chunks, x.vectors)
}

// editCycles indexes total generated notes with vectors of space, then
// edits a different run of edited notes in each cycle, re-embedding as the
// vectorizer does, and returns the file size clean and at the end.
func editCycles(ctx context.Context, path string, space vault.EmbeddingSpace, total, edited, cycles int) (clean, final int64, err error) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(p)
	}
	open := func() (*index.Store, error) {
		return index.Open(ctx, index.Options{Path: path, Space: space, Logger: quiet})
	}
	size := func(s *index.Store) (int64, error) {
		// Closing folds the WAL into the file.
		if err := s.Close(); err != nil {
			return 0, err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return 0, err
		}
		return fi.Size(), nil
	}
	notes := Generate(total)
	batch := func(first, n, rev int) index.Batch {
		var b index.Batch
		for k := range n {
			nt := notes[(first+k)%len(notes)]
			b.Upserts = append(b.Upserts, vault.NoteInput{Path: nt.Path, Rev: fmt.Sprint(rev), Text: nt.Text + fmt.Sprintf("\nRevision %d.\n", rev)})
		}
		return b
	}
	s, err := open()
	if err != nil {
		return 0, 0, err
	}
	emb := hashEmbedder{space.Dim}
	step := func(b index.Batch) error {
		if _, err := s.Feed().Apply(ctx, b); err != nil {
			return err
		}
		_, err := vectorizer.New(s.Vectors(), emb, vectorizer.Options{BatchChunks: 500, Logger: quiet}).Drain(ctx)
		return err
	}
	if err := step(batch(0, len(notes), 0)); err != nil {
		return 0, 0, err
	}
	if clean, err = size(s); err != nil {
		return 0, 0, err
	}
	if s, err = open(); err != nil {
		return 0, 0, err
	}
	for c := 1; c <= cycles; c++ {
		if err := step(batch(c*edited, edited, c)); err != nil {
			return 0, 0, err
		}
	}
	final, err = size(s)
	return clean, final, err
}
