package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

// The fake upstream's reply: its first word is what time to first token
// waits for.
const (
	firstWord = "Alpha"
	reply     = "Alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango"
)

// questions asked through the chat API on the corpus: its subjects
// (Obsidian).
var chatQuestions = []string{
	"how do I use templates for my daily notes?",
	"what is the graph view good for?",
	"how can I sync my vault between devices?",
	"which plugins help with tasks?",
	"how do I link to a heading in another note?",
}

// generatedQuestions are chatQuestions for the generated vault, which the
// serve sections run on when the corpus is absent: in its words, so that
// retrieval finds passages and the upstream is asked (a question the vault
// is silent on is answered without it).
var generatedQuestions = []string{
	"how do I knead the sourdough dough?",
	"what did I write about the copper kettle?",
	"how do I repair the garden bridge?",
	"what are my notes on baking?",
	"how do I prune the orchard?",
}

// questions are the chat questions for the vault serve follows.
func (r *run) questions() []string {
	if r.cfg.Corpus == "" {
		return generatedQuestions
	}
	return chatQuestions
}

// serveEnv runs serve on the corpus database with the fake upstream as its
// generation model and room for the concurrency scenario's clients.
func (r *run) serveEnv(indexPath string) []string {
	return r.couchEnv(r.corpusDB, indexPath, true,
		"VAULTASK_MODELS__GENERATION=ollama/fake", "VAULTASK_MODELS__GENERATION_BASE_URL="+r.upstream.URL(),
		"VAULTASK_API__MAX_CONCURRENT=64")
}

// startCorpusServe starts serve on a fresh copy of the corpus index.
func (r *run) startCorpusServe(ctx context.Context, name string) (*server, error) {
	if r.corpusIndex == "" {
		return nil, errors.New("no corpus index: section 2 did not run")
	}
	path := filepath.Join(r.work, name+".db")
	if err := copyFile(r.corpusIndex, path); err != nil {
		return nil, err
	}
	return startServe(ctx, r.bin, r.work, r.serveEnv(path))
}

func footprint(ctx context.Context, r *run, s *Section) error {
	s.Command = "go run -tags sqlite_fts5 ./devtools/cmd/bench -only 2,7 -size " + r.cfg.Size
	s.Notes = append(s.Notes,
		"Start to ready: exec of `vaultask serve` on a copy of the index section 2 built (vectors included, its feed checkpoint current) until `/readyz` answers 200. Baseline: `vaultask stats` on the same index, which starts the binary, opens the index and reads it: the floor of any start.",
		fmt.Sprintf("Idle RSS: VmRSS of that server %v after it is ready, nothing asked. The edit-cycle rows use the index package directly with a deterministic stand-in embedder (file size does not depend on the vectors' values).", r.sz.idle))
	fi, err := os.Stat(r.bin)
	if err != nil {
		return err
	}
	s.add("binary size (scripts/build-release.sh: -trimpath, -ldflags \"-s -w\", as released)", "MiB", []float64{mib(fi.Size())})
	if r.completed > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("Section 2's index run with vectors stopped at its budget; the %d chunks it had not embedded got pool vectors (see section 3) so that serve starts with no embedding backlog, as on a vault indexed long ago. Sections 5, 6 and 1 use the same server.", r.completed))
	}
	if r.corpusIndex == "" {
		return skipf("no corpus index: section 2 did not run")
	}
	var ready, floor, idle, floorRSS []float64
	for i := range r.sz.runs {
		st, err := runChild(ctx, r.bin, r.work, r.serveEnv(r.corpusIndex), "stats", "--json")
		if err != nil {
			return err
		}
		floor = append(floor, ms(st.Wall))
		floorRSS = append(floorRSS, mib(st.PeakRSS))
		srv, err := r.startCorpusServe(ctx, fmt.Sprintf("footprint-%d", i))
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
		if i == r.sz.runs-1 {
			r.serve = srv // sections 5, 6 and 1 use the last one
		} else if err := srv.stop(); err != nil {
			return err
		}
	}
	s.add("start to ready on the existing "+r.sz.corpus+" index", "ms", ready).against("vaultask stats on it", floor).target("< 1 s", median, 1000, false)
	s.add("idle RSS of vaultask serve", "MiB", idle).against("peak RSS of vaultask stats", floorRSS).target("< 150 MB", median, 150*1e6/(1<<20), false)
	s.add("peak RSS indexing "+r.sz.corpus+", FTS only", "MiB", r.corpusFTS.rss)
	s.add("peak RSS indexing "+r.sz.corpus+", with vectors", "MiB", r.corpusVec.rss)
	per1k := func(x rates) []float64 { return []float64{mib(x.fileBytes) * 1000 / float64(x.notes)} }
	withVectors := func(x rates) string {
		if x.vectors >= x.chunks {
			return fmt.Sprintf("with vectors, all %d chunks embedded by the built-in model", x.chunks)
		}
		return fmt.Sprintf("with vectors, all %d chunks: %d embedded by the built-in model before the budget, the rest pool vectors", x.chunks, x.vectors)
	}
	s.add(fmt.Sprintf("index file per 1k notes, %s, FTS only", r.sz.corpus), "MiB", per1k(r.corpusFTS))
	s.add(fmt.Sprintf("index file per 1k notes, %s, %s", r.sz.corpus, withVectors(r.corpusVec)), "MiB", per1k(r.corpusVec))
	s.add(fmt.Sprintf("index file per 1k notes, generated %d, FTS only", r.genFTS.notes), "MiB", per1k(r.genFTS))
	s.add(fmt.Sprintf("index file per 1k notes, generated %d, %s", r.genVec.notes, withVectors(r.genVec)), "MiB", per1k(r.genVec))
	g := r.sz.growth
	clean, final, err := editCycles(ctx, filepath.Join(r.work, "growth.db"), g[0], g[1], g[2])
	if err != nil {
		return err
	}
	s.add(fmt.Sprintf("index file after %d edit cycles of %d notes (%d-note vault)", g[2], g[1], g[0]), "MiB", []float64{mib(final)}).
		against("the same index clean", []float64{mib(clean)})
	return nil
}

// editCycles indexes total generated notes with vectors, then edits a
// different run of edited notes in each cycle, re-embedding as the
// vectorizer does, and returns the file size clean and at the end.
func editCycles(ctx context.Context, path string, total, edited, cycles int) (clean, final int64, err error) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(p)
	}
	open := func() (*index.Store, error) {
		return index.Open(ctx, index.Options{Path: path, Space: builtinSpace, Logger: quiet})
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
	emb := hashEmbedder{}
	step := func(b index.Batch) error {
		if _, err := s.Apply(ctx, b); err != nil {
			return err
		}
		_, err := vectorizer.New(s, emb, vectorizer.Options{BatchChunks: 500, Logger: quiet}).Drain(ctx)
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

func timeToFirstToken(ctx context.Context, r *run, s *Section) error {
	s.Command = "go run -tags sqlite_fts5 ./devtools/cmd/bench -only 2,7,5 -size " + r.cfg.Size
	if r.serve == nil {
		return skipf("no server: section 7 did not run")
	}
	first := 300 * time.Millisecond
	r.upstream.SetDelays(first, 5*time.Millisecond)
	s.Notes = append(s.Notes,
		fmt.Sprintf("A fake OpenAI-compatible upstream (tstest/fakellm, loopback) sends its first word %v after the request and one word every 5 ms after that. Each of %d rounds streams one question straight from the upstream (the baseline), then the same question through `vaultask serve`'s `/v1/chat/completions` (retrieval on the %s index with vectors, the prompt assembled, then the upstream's stream relayed). Time to first token: request sent → the first content chunk holding the upstream's first word.", first, r.sz.ttft, r.sz.corpus),
		"Added by vaultask: the per-round difference, vaultask minus direct.")
	var direct, via, added []float64
	for i := range r.sz.ttft + 3 {
		q := r.questions()[i%len(r.questions())]
		d, err := streamChat(ctx, r.upstream.URL(), "fake", q, firstWord)
		if err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		v, err := streamChat(ctx, r.serve.URL+"/v1", "vault-ask", q, firstWord)
		if err != nil {
			return fmt.Errorf("through vaultask: %w\n%s", err, r.serve.stderr)
		}
		if i < 3 {
			continue // warm-up
		}
		direct, via = append(direct, ms(d)), append(via, ms(v))
		added = append(added, ms(v-d))
	}
	s.dist("time to first token through vaultask", "ms", via).against("the upstream called directly", direct)
	s.dist("added by vaultask (through − direct, per round)", "ms", added).target("< 15 ms (median)", median, 15, false)
	// What the added time is made of: the same questions' retrieval, in
	// this process on the same index, and a CPU profile of a pass after.
	store, err := index.Open(ctx, index.Options{Path: r.corpusIndex, Space: builtinSpace, ReadOnly: true,
		Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
	if err != nil {
		return err
	}
	defer store.Close()
	lat, err := r.measureRetrieval(ctx, store, store, r.questions(), r.sz.ttft, true)
	if err != nil {
		return err
	}
	s.dist("  of which retrieval (the same questions in process, same index)", "ms", lat.retrieve)
	s.dist("  its query embedding alone", "ms", lat.embed)
	s.dist("  its vector KNN alone", "ms", lat.knn)
	s.dist("  its FTS query alone", "ms", lat.fts)
	if lat.profile != "" {
		s.Notes = append(s.Notes, fmt.Sprintf("CPU profile of that in-process retrieval, taken in a separate pass of the same questions after the measured one (`go tool pprof -top`):\n\n```\n%s\n```", lat.profile))
	}
	return nil
}

func concurrency(ctx context.Context, r *run, s *Section) error {
	s.Command = "go run -tags sqlite_fts5 ./devtools/cmd/bench -only 2,7,6 -size " + r.cfg.Size
	if r.serve == nil {
		return skipf("no server: section 7 did not run")
	}
	r.upstream.SetDelays(300*time.Millisecond, 10*time.Millisecond)
	s.Notes = append(s.Notes,
		fmt.Sprintf("N clients each stream answers back to back for %v through `vaultask serve` (api.max_concurrent set to 64, of which answers may hold 63; by default answers hold at most 3 of 4 slots and wait up to api.slot_wait for one), the upstream as in section 5 but 10 ms per word (20 words). Baseline: the same N clients against the upstream directly, in the same run. An error is a refused request, a stream without the first word or without [DONE].", r.sz.clientFor))
	for _, n := range r.sz.clients {
		via := clientLoad(ctx, n, r.sz.clientFor, r.serve.URL+"/v1", "vault-ask", r.questions())
		direct := clientLoad(ctx, n, r.sz.clientFor, r.upstream.URL(), "fake", r.questions())
		s.add(fmt.Sprintf("%d clients: answers/s", n), "answers/s", []float64{via.rate()}).against("upstream directly", []float64{direct.rate()})
		s.dist(fmt.Sprintf("%d clients: time to first token", n), "ms", via.ttft).against("upstream directly", direct.ttft)
		row := s.add(fmt.Sprintf("%d clients: errors", n), "errors", []float64{float64(via.errors)}).against("upstream directly", []float64{float64(direct.errors)})
		if n == 50 {
			row.target("no error with 50 streams", maxOf, 0, false)
		}
		if via.firstErr != "" {
			row.Note = "first: " + strings.ReplaceAll(via.firstErr, "|", "/")
		}
	}
	return nil
}

type loadResult struct {
	ttft     []float64
	answers  int
	errors   int
	firstErr string
	took     time.Duration
}

func (l loadResult) rate() float64 { return float64(l.answers) / l.took.Seconds() }

// clientLoad runs n clients streaming answers to questions from base for d.
func clientLoad(ctx context.Context, n int, d time.Duration, base, model string, questions []string) loadResult {
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for c := range n {
		wg.Go(func() {
			for i := 0; time.Now().Before(end) && ctx.Err() == nil; i++ {
				t, err := streamChat(ctx, base, model, questions[(c+i)%len(questions)], firstWord)
				mu.Lock()
				if err != nil {
					res.errors++
					if res.firstErr == "" {
						res.firstErr = err.Error()
					}
				} else {
					res.answers++
					res.ttft = append(res.ttft, ms(t))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.took = time.Since(start)
	return res
}
