package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// clustered is a unit vector of 512 dimensions near one of 20 centres:
// vectors with structure, as an embedder's are, so that the nearest ones
// are close together and a coarse ranking mixes them up (a shortlist of k
// alone keeps 94% of the exact top 40 of TestShortlistRecall; of 2k, all).
func clustered(seed int) []float32 {
	const clusters, spread = 20, 0.15
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	centre := unitVector(1000 + r.IntN(clusters))
	v := make([]float32, len(centre))
	var norm float64
	for d := range v {
		x := float64(centre[d]) + spread*r.NormFloat64()/math.Sqrt(float64(len(v)))
		v[d] = float32(x)
		norm += x * x
	}
	for d := range v {
		v[d] /= float32(math.Sqrt(norm))
	}
	return v
}

// numberAtEnd is N of a chunk text ending "note N".
func numberAtEnd(text string) int {
	j := strings.TrimRightFunc(text, func(r rune) bool { return r >= '0' && r <= '9' })
	n, _ := strconv.Atoi(text[len(j):])
	return n
}

var space512 = vault.EmbeddingSpace{Model: "test/seeded", Dim: 512}

// clusteredStore is a store of notes notes of one chunk each, every fifth
// personal, embedded with clustered vectors seeded by the note's number.
func clusteredStore(t *testing.T, path string, notes int) *Store {
	t.Helper()
	s := mustOpen(t, Options{Path: path, Space: space512, Sensitivity: Classifier{PersonalPaths: []string{"p/**"}}})
	var ns []vault.NoteInput
	for i := range notes {
		ns = append(ns, note(notePath(i), fmt.Sprintf("note %d", i)))
	}
	mustApply(t, s, upserts(ns...))
	embedAll(t, s, func(text string) []float32 { return clustered(numberAtEnd(text)) })
	return s
}

func notePath(i int) string {
	if i%5 == 0 {
		return fmt.Sprintf("p/n%04d.md", i)
	}
	return fmt.Sprintf("open/n%04d.md", i)
}

// TestShortlistRecall measures SearchVector against brute force on 2000
// clustered vectors: the mean share of the exact top 40 it returns, over 50
// queries and both scopes, is at least 0.98, and every chunk both return
// has the same distance (the rescore is exact).
func TestShortlistRecall(t *testing.T) {
	ctx := context.Background()
	s := clusteredStore(t, "", 2000)
	mustShortlist(t, s)
	const k = 40
	for _, scope := range []vault.Scope{vault.ScopeAll, vault.ScopeOpen} {
		var recall float64
		for i := range 50 {
			q := clustered(100000 + i)
			exact, err := s.Search().SearchVectorExact(ctx, s.queryOf(q), k, scope)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Search().SearchVector(ctx, s.queryOf(q), k, scope)
			if err != nil {
				t.Fatal(err)
			}
			if len(exact) != k || len(got) != k {
				t.Fatalf("%d exact hits and %d from the shortlist, want %d", len(exact), len(got), k)
			}
			want := map[int64]float64{}
			for _, h := range exact {
				want[h.RowID] = h.Score
			}
			found := 0
			for _, h := range got {
				if d, ok := want[h.RowID]; ok {
					found++
					if d != h.Score {
						t.Fatalf("chunk %d: distance %g, brute force's %g", h.RowID, h.Score, d)
					}
				}
				if scope.OpenOnly() && h.Sensitivity != vault.SensitivityOpen {
					t.Fatalf("open search found %s (%s)", h.Path, h.Sensitivity)
				}
			}
			recall += float64(found) / k
		}
		if recall /= 50; recall < 0.98 {
			t.Errorf("scope %v: recall@%d %.3f, want ≥ 0.98", scope, k, recall)
		}
		t.Logf("scope %v: recall@%d %.4f", scope, k, recall)
	}
}

// mustShortlist has s read its vector set, so that SearchVector searches
// through it.
func mustShortlist(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Search().WarmVectorSearch(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// loadedSet is s's vector set of its active space, which must be read.
func loadedSet(t *testing.T, s *Store) *vectorSet {
	t.Helper()
	vs := s.sets.get(s.spaces().active.id)
	if vs == nil {
		t.Fatal("no vector set: the test proves nothing")
	}
	return vs
}

// awaitShortlist waits for the read of the vector set a search started.
func awaitShortlist(t *testing.T, s *Store) {
	t.Helper()
	s.sets.mu.Lock()
	r := s.sets.reading[s.spaces().active.id]
	s.sets.mu.Unlock()
	if r == nil {
		t.Fatal("no read of the vector set was started")
	}
	<-r.Done()
}

// mustMatchIndex checks that the store's vector set holds exactly what the
// vectors table does, as a set read afresh would.
func mustMatchIndex(t *testing.T, s *Store) {
	t.Helper()
	fresh, err := s.readSet(context.Background(), s.spaces().active)
	if err != nil {
		t.Fatal(err)
	}
	if err := loadedSet(t, s).set.Diff(fresh.set); err != nil {
		t.Fatalf("the vector set differs from the index: %v", err)
	}
}

// TestShortlistFollowsWrites checks that once built, the shortlist follows
// every write that changes the vectors, each checked against a fresh read and
// by a search: vectors published, notes rewritten and deleted, notes
// reclassified both ways, topic changes that send chunks back to the
// embedder, a write that fails (it changes nothing), and a reopen.
func TestShortlistFollowsWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	// More than one of the vector set's blocks (1024 vectors), so that a
	// drop moves a slot across blocks.
	s := clusteredStore(t, path, 1224)
	q := clustered(777777)
	if s.sets.get(s.spaces().active.id) != nil {
		t.Fatal("a vector set before the first search")
	}
	if _, err := s.Search().SearchVector(ctx, s.queryOf(q), 10, vault.ScopeAll); err != nil {
		t.Fatal(err)
	}
	awaitShortlist(t, s)
	mustMatchIndex(t, s)
	top := func(scope vault.Scope) []string {
		t.Helper()
		hits, err := s.Search().SearchVector(ctx, s.queryOf(q), 10, scope)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := s.Search().SearchVectorExact(ctx, s.queryOf(q), 10, scope)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := paths(hits), paths(exact); !slices.Equal(got, want) {
			t.Fatalf("shortlist %v, brute force %v", got, want)
		}
		return paths(hits)
	}

	// New notes, the query's own vector among them: found first.
	mustApply(t, s, upserts(note("open/new.md", "note 777777"), note("open/other.md", "note 99999")))
	embedAll(t, s, func(text string) []float32 { return clustered(numberAtEnd(text)) })
	mustMatchIndex(t, s)
	if got := top(vault.ScopeOpen); got[0] != "open/new.md" {
		t.Fatalf("after adding open/new.md, top = %v", got)
	}

	// Rewritten: its old vector is gone until the new one is published.
	mustApply(t, s, upserts(vault.NoteInput{Path: "open/new.md", Rev: "2", Text: "note 123456"}))
	mustMatchIndex(t, s)
	if got := top(vault.ScopeAll); contains(got, "open/new.md") {
		t.Fatalf("a rewritten note awaiting its vector is found: %v", got)
	}
	mustApply(t, s, upserts(vault.NoteInput{Path: "open/new.md", Rev: "3", Text: "note 777777"}))
	embedAll(t, s, func(text string) []float32 { return clustered(numberAtEnd(text)) })
	mustMatchIndex(t, s)

	// Deleted, from the first block (the last slot moves into its place).
	mustApply(t, s, Batch{Deletes: []string{"open/new.md", notePath(1), notePath(2)}})
	mustMatchIndex(t, s)
	if got := top(vault.ScopeAll); contains(got, "open/new.md") {
		t.Fatalf("a deleted note is found: %v", got)
	}

	// A failed write changes nothing: its delete is rolled back with it.
	if _, err := s.Feed().Apply(ctx, Batch{Deletes: []string{notePath(3)}, Upserts: []vault.NoteInput{{Path: "../bad.md", Rev: "1", Text: "x"}}}); err == nil {
		t.Fatal("an unclean path was applied")
	}
	mustMatchIndex(t, s)

	// Reclassified: every open note personal, then back.
	before := top(vault.ScopeOpen)
	s.classifier.PersonalPaths = []string{"p/**", "open/**"}
	if _, err := s.Feed().Reclassify(ctx, false); err != nil {
		t.Fatal(err)
	}
	mustMatchIndex(t, s)
	if got := top(vault.ScopeOpen); len(got) != 0 {
		t.Fatalf("open search after every note went personal: %v", got)
	}
	s.classifier.PersonalPaths = []string{"p/**"}
	if _, err := s.Feed().Reclassify(ctx, false); err != nil {
		t.Fatal(err)
	}
	mustMatchIndex(t, s)
	if got := top(vault.ScopeOpen); !slices.Equal(got, before) {
		t.Fatalf("open search after reclassifying back = %v, was %v", got, before)
	}

	// A topic note that clips a note changes its prelude: its vector is
	// dropped until it is embedded again, under the same rowid.
	clipped := notePath(4)
	mustApply(t, s, upserts(note("99 topics/T.md", "# T\n<!-- begin:clippings -->\n- [["+strings.TrimSuffix(filepath.Base(clipped), ".md")+"]]\n<!-- end:clippings -->\n")))
	if n := count(t, s, `SELECT count(*) FROM chunks c JOIN docs d ON d.doc_id = c.doc_id WHERE d.path = ? AND c.embedded = 0`, clipped); n == 0 {
		t.Fatal("the clipped note kept its vector: the test proves nothing")
	}
	mustMatchIndex(t, s)
	embedAll(t, s, func(text string) []float32 { return clustered(numberAtEnd(text) + 1) })
	mustMatchIndex(t, s)

	// Reopened: read afresh at the first search, the same answer.
	want := top(vault.ScopeAll)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, Options{Path: path, Space: space512, Sensitivity: Classifier{PersonalPaths: []string{"p/**"}}})
	if got := top(vault.ScopeAll); !slices.Equal(got, want) {
		t.Fatalf("after reopening, by brute force: %v, was %v", got, want)
	}
	awaitShortlist(t, s)
	if got := top(vault.ScopeAll); !slices.Equal(got, want) {
		t.Fatalf("after reopening: %v, was %v", got, want)
	}
	mustMatchIndex(t, s)
}

// TestReadOnlyShortlistSeesWrites checks that a read-only store reads its
// shortlist again when another store's writes change the vectors.
func TestReadOnlyShortlistSeesWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	w := clusteredStore(t, path, 100)
	r := mustOpen(t, Options{Path: path, Space: space512, Sensitivity: Classifier{PersonalPaths: []string{"p/**"}}, ReadOnly: true})
	q := clustered(424242)
	// first reads the shortlist again when it is out of date and returns
	// the top hit of a search through it.
	first := func() string {
		t.Helper()
		if err := r.Search().WarmVectorSearch(ctx); err != nil {
			t.Fatal(err)
		}
		if v := str(t, w, `SELECT value FROM meta WHERE key = ?`, vectorsVersionMeta); loadedSet(t, r).version != v {
			t.Fatalf("vector set at version %s, the index at %s", loadedSet(t, r).version, v)
		}
		hits, err := r.Search().SearchVector(ctx, r.queryOf(q), 1, vault.ScopeOpen)
		if err != nil || len(hits) != 1 {
			t.Fatalf("SearchVector = %v, %v", hits, err)
		}
		return hits[0].Path
	}
	if first() == "open/q.md" {
		t.Fatal("found before it was written")
	}
	mustApply(t, w, upserts(note("open/q.md", "note 424242")))
	embedAll(t, w, func(text string) []float32 { return clustered(numberAtEnd(text)) })
	if got := first(); got != "open/q.md" {
		t.Fatalf("after another store added it, top = %s", got)
	}
	w.classifier.PersonalPaths = []string{"p/**", "open/q.md"}
	if _, err := w.Feed().Reclassify(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := first(); got == "open/q.md" {
		t.Fatal("an open search found a note another store made personal")
	}
	mustMatchIndex(t, r)
}

// TestShortlistConcurrent runs open-only searches while a writer adds,
// rewrites, deletes and reclassifies notes (under -race): no search fails,
// none returns a personal chunk, and each returns k hits (the index always
// holds more than k open chunks).
func TestShortlistConcurrent(t *testing.T) {
	ctx := context.Background()
	s := clusteredStore(t, "", 300)
	const k = 10
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for r := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				hits, err := s.Search().SearchVector(ctx, s.queryOf(clustered(i*3+r)), k, vault.ScopeOpen)
				if err == nil && len(hits) != k {
					err = fmt.Errorf("%d hits, want %d", len(hits), k)
				}
				for _, h := range hits {
					if err == nil && h.Sensitivity != vault.SensitivityOpen {
						err = fmt.Errorf("open search found %s (%s)", h.Path, h.Sensitivity)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	embed := func(text string) []float32 { return clustered(numberAtEnd(text)) }
	for round := range 20 {
		i := 1 + round*7
		mustApply(t, s, upserts(vault.NoteInput{Path: notePath(i), Rev: fmt.Sprint(round + 2), Text: fmt.Sprintf("note %d", 1000+i)}))
		mustApply(t, s, Batch{Deletes: []string{notePath(i + 1)}})
		embedAll(t, s, embed)
		s.classifier.PersonalPaths = []string{"p/**", fmt.Sprintf("open/n%04d.md", i+2)}
		if _, err := s.Feed().Reclassify(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mustMatchIndex(t, s)
}

// TestRescoreChecksSnapshot changes the index behind the shortlist's back,
// as a commit the shortlist has not caught up with (or a reader's snapshot
// from before one it has) would: a chunk made personal, another deleted.
// The shortlist still offers both; the rescore, which reads the snapshot,
// returns neither, and still k hits.
func TestRescoreChecksSnapshot(t *testing.T) {
	ctx := context.Background()
	s := clusteredStore(t, "", 100)
	mustShortlist(t, s)
	rowOf := func(path string) int64 {
		t.Helper()
		return int64(count(t, s, `SELECT c.rowid FROM chunks c JOIN docs d ON d.doc_id = c.doc_id WHERE d.path = ?`, path))
	}
	secret, gone := rowOf(notePath(1)), rowOf(notePath(2))
	for _, q := range []string{
		`UPDATE chunks SET sensitivity = 'personal' WHERE rowid = ?1`,
		`DELETE FROM vectors WHERE chunk = ?2`,
		`DELETE FROM docs WHERE path = ?3`,
	} {
		if _, err := s.writer.Exec(q, secret, gone, notePath(2)); err != nil {
			t.Fatal(err)
		}
	}
	sl := loadedSet(t, s)
	if _, open, ok := sl.set.Lookup(secret); !ok || !open {
		t.Fatal("the shortlist does not hold the chunk as open: the test proves nothing")
	}
	if _, _, ok := sl.set.Lookup(gone); !ok {
		t.Fatal("the shortlist does not hold the deleted chunk: the test proves nothing")
	}
	const k = 5
	for _, c := range []struct {
		q     []float32
		scope vault.Scope
		not   string
	}{{clustered(1), vault.ScopeOpen, notePath(1)}, {clustered(2), vault.ScopeAll, notePath(2)}} {
		if ids := sl.set.Nearest(c.q, 2*k, c.scope.OpenOnly()); !slices.Contains(ids, map[string]int64{notePath(1): secret, notePath(2): gone}[c.not]) {
			t.Fatalf("the shortlist does not offer %s: the test proves nothing", c.not)
		}
		hits, err := s.Search().SearchVector(ctx, s.queryOf(c.q), k, c.scope)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != k || contains(paths(hits), c.not) {
			t.Fatalf("scope %v: %v, want %d hits without %s", c.scope, paths(hits), k, c.not)
		}
	}
}
