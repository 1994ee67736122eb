package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vaultask/vaultask/index"
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

// serveEnv runs serve with model m on the corpus database, with the fake
// upstream as its generation model and room for the concurrency scenario's
// clients.
func (r *run) serveEnv(m *modelRun, indexPath string) []string {
	return r.couchEnv(r.corpusDB, indexPath, m,
		"VAULTASK_MODELS__GENERATION=ollama/fake", "VAULTASK_MODELS__GENERATION_BASE_URL="+r.upstream.URL(),
		"VAULTASK_API__MAX_CONCURRENT=64")
}

// startCorpusServe starts serve with model m on a fresh copy of m's corpus
// index, removed when the server stops.
func (r *run) startCorpusServe(ctx context.Context, m *modelRun) (*server, error) {
	if m.corpusIndex == "" {
		return nil, errors.New("no corpus index: section 2 did not run")
	}
	r.serves++
	path := filepath.Join(r.work, fmt.Sprintf("serve-%s-%d.db", m.name, r.serves))
	if err := copyFile(m.corpusIndex, path); err != nil {
		return nil, err
	}
	srv, err := startServe(ctx, r.bin, r.work, r.serveEnv(m, path))
	if err != nil {
		return nil, err
	}
	srv.index = path
	return srv, nil
}

// serveFor is the server the serve sections measure model m through: the
// one running when it serves m (sections 7, 5, 6 and 1 share it), else a
// new one on a fresh copy of m's corpus index, the running one stopped
// first: two servers following one database would both index what a
// section writes.
func (r *run) serveFor(ctx context.Context, m *modelRun) (*server, error) {
	if r.serve != nil && r.serveModel == m {
		return r.serve, nil
	}
	if err := r.stopServe(); err != nil {
		return nil, err
	}
	srv, err := r.startCorpusServe(ctx, m)
	if err != nil {
		return nil, err
	}
	r.serve, r.serveModel = srv, m
	return srv, nil
}

// stopServe stops the shared server, if one runs.
func (r *run) stopServe() error {
	if r.serve == nil {
		return nil
	}
	err := r.serve.stop()
	r.serve, r.serveModel = nil, nil
	return err
}

// noCorpusIndex is the serve sections' skip when section 2 did not run.
func (r *run) noCorpusIndex() error {
	if r.first().corpusIndex == "" {
		return skipf("no corpus index: section 2 did not run")
	}
	return nil
}

func timeToFirstToken(ctx context.Context, r *run, s *Section) error {
	s.Command = r.reproduce("2,7,5")
	if err := r.noCorpusIndex(); err != nil {
		return err
	}
	first := 300 * time.Millisecond
	r.upstream.SetDelays(first, 5*time.Millisecond)
	s.Notes = append(s.Notes,
		fmt.Sprintf("A fake OpenAI-compatible upstream (tstest/fakellm, loopback) sends its first word %v after the request and one word every 5 ms after that. For each built-in model (%s), a `vaultask serve` embedding with it runs on the %s index it built in section 2, and each of %d rounds streams one question straight from the upstream (the baseline), then the same question through serve's `/v1/chat/completions` (retrieval on that index with vectors, the question embedded by the model, the prompt assembled, then the upstream's stream relayed). Time to first token: request sent → the first content chunk holding the upstream's first word.", first, r.modelLabels(), r.sz.corpus, r.sz.ttft),
		"Added by vaultask: the per-round difference, vaultask minus direct; a model after the first is compared with the first in the same run. The targets are issue 13's for USE-lite (< 15 ms), issue 35's for e5 (< 25 ms).")
	var firstAdded []float64
	for i, m := range r.models {
		added, err := r.ttftRounds(ctx, s, m)
		if err != nil {
			return err
		}
		row := s.dist("added by vaultask (through − direct, per round), "+m.label, "ms", added).
			target(fmt.Sprintf("< %g ms (median)", m.targets.ttftAdded), median, m.targets.ttftAdded, false)
		if i == 0 {
			firstAdded = added
		} else {
			row.against(r.sameRun(""), firstAdded)
		}
		if err := r.ttftParts(ctx, s, m); err != nil {
			return err
		}
	}
	return nil
}

// ttftRounds streams the questions straight from the upstream and through
// a serve embedding with m, adds the time to first token through serve,
// and returns what serve added, round by round.
func (r *run) ttftRounds(ctx context.Context, s *Section, m *modelRun) ([]float64, error) {
	srv, err := r.serveFor(ctx, m)
	if err != nil {
		return nil, err
	}
	var direct, via, added []float64
	for i := range r.sz.ttft + 3 {
		q := r.questions()[i%len(r.questions())]
		d, err := streamChat(ctx, r.upstream.URL(), "fake", q, firstWord)
		if err != nil {
			return nil, fmt.Errorf("direct: %w", err)
		}
		v, err := streamChat(ctx, srv.URL+"/v1", "vault-ask", q, firstWord)
		if err != nil {
			return nil, fmt.Errorf("through vaultask: %w\n%s", err, srv.stderr)
		}
		if i < 3 {
			continue // warm-up
		}
		direct, via = append(direct, ms(d)), append(via, ms(v))
		added = append(added, ms(v-d))
	}
	s.dist("time to first token through vaultask, "+m.label, "ms", via).against("the upstream called directly", direct)
	return added, nil
}

// ttftParts adds what the added time is made of with model m: the same
// questions' retrieval, in this process on the same index, and a CPU
// profile of a pass after.
func (r *run) ttftParts(ctx context.Context, s *Section, m *modelRun) error {
	store, err := index.Open(ctx, index.Options{Path: m.corpusIndex, Space: m.space, ReadOnly: true,
		Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
	if err != nil {
		return err
	}
	defer store.Close()
	lat, err := r.measureRetrieval(ctx, m, store.Search(), store, r.questions(), r.sz.ttft, true)
	if err != nil {
		return err
	}
	s.dist("  of which retrieval (the same questions in process, same index), "+m.label, "ms", lat.retrieve)
	s.dist("  its query embedding alone, "+m.label, "ms", lat.embed)
	s.dist("  its vector KNN alone, "+m.label, "ms", lat.knn)
	s.dist("  its FTS query alone, "+m.label, "ms", lat.fts)
	if lat.profile != "" {
		s.Notes = append(s.Notes, fmt.Sprintf("CPU profile of that in-process retrieval with %s, taken in a separate pass of the same questions after the measured one (`go tool pprof -top`):\n\n```\n%s\n```", m.label, lat.profile))
	}
	return nil
}

func concurrency(ctx context.Context, r *run, s *Section) error {
	s.Command = r.reproduce("2,7,6")
	if err := r.noCorpusIndex(); err != nil {
		return err
	}
	srv, err := r.serveFor(ctx, r.first())
	if err != nil {
		return err
	}
	r.upstream.SetDelays(300*time.Millisecond, 10*time.Millisecond)
	s.Notes = append(s.Notes,
		fmt.Sprintf("N clients each stream answers back to back for %v through `vaultask serve` (embedding with %s, the first model of the run; api.max_concurrent set to 64, of which answers may hold 63; by default answers hold at most 3 of 4 slots and wait up to api.slot_wait for one), the upstream as in section 5 but 10 ms per word (20 words). Baseline: the same N clients against the upstream directly, in the same run. An error is a refused request, a stream without the first word or without [DONE].", r.sz.clientFor, r.first().label))
	for _, n := range r.sz.clients {
		via := clientLoad(ctx, n, r.sz.clientFor, srv.URL+"/v1", "vault-ask", r.questions())
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
