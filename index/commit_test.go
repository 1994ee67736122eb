package index

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/vault"
)

// cacheProbe reads through one of the store's caches and writes what
// changes the answer.
type cacheProbe struct {
	// setUp writes what read needs.
	setUp func(t *testing.T, w *Store)
	// read answers through the cache, filling it.
	read func(t *testing.T, s *Store) string
	// write changes the answer read gives.
	write func(t *testing.T, w *Store)
	// held is what the cache holds, for checking that this store's own
	// write emptied it at once (nil: a cache that follows writes rather
	// than forgetting them).
	held func(s *Store) int
}

// oldSpace is the space a probe makes active beside the configured one,
// as an index built with another model holds it while it re-embeds.
var oldSpace = vault.EmbeddingSpace{Model: "test/old", Dim: 4}

// cacheProbes has a probe for each cache Store.hooks lists, by its name.
var cacheProbes = map[string]cacheProbe{
	"embedding spaces": {
		// The index is one that re-embeds: its chunks all have their
		// vector in the configured space, being filled, and none in the
		// active old one.
		setUp: func(t *testing.T, w *Store) {
			mustApply(t, w, upserts(note("a.md", "alpha")))
			embedAll(t, w, func(string) []float32 { return clustered(1) })
			for _, q := range []string{`UPDATE spaces SET state = 'filling'`, `INSERT INTO spaces(model, dim, state) VALUES ('test/old', 4, 'active')`} {
				if _, err := w.db().Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.loadSpaces(context.Background(), w.writer); err != nil {
				t.Fatal(err)
			}
		},
		// read names the space a search accepts a query of.
		read: func(t *testing.T, s *Store) string {
			var accepted []string
			for _, space := range []vault.EmbeddingSpace{oldSpace, space512} {
				vec := make([]float32, space.Dim)
				vec[0] = 1
				_, err := s.Search().SearchVectorExact(context.Background(), vault.QueryVector{Space: space, Values: vec}, 3, vault.ScopeAll)
				switch {
				case err == nil:
					accepted = append(accepted, space.Model)
				case !errors.Is(err, vault.ErrOtherSpace):
					t.Fatal(err)
				}
			}
			return strings.Join(accepted, " ")
		},
		write: func(t *testing.T, w *Store) {
			if ok, err := w.Vectors().PromoteFilled(context.Background()); err != nil || !ok {
				t.Fatalf("PromoteFilled: %v, %v", ok, err)
			}
		},
	},
	"vector sets": {
		setUp: func(t *testing.T, w *Store) {
			var ns []vault.NoteInput
			for i := range 50 {
				ns = append(ns, note(notePath(i), fmt.Sprintf("note %d", i)))
			}
			mustApply(t, w, upserts(ns...))
			embedAll(t, w, func(text string) []float32 { return clustered(numberAtEnd(text)) })
		},
		read: func(t *testing.T, s *Store) string {
			ctx := context.Background()
			if err := s.Search().WarmVectorSearch(ctx); err != nil {
				t.Fatal(err)
			}
			hits, err := s.Search().SearchVector(ctx, s.queryOf(clustered(31337)), 3, vault.ScopeOpen)
			if err != nil {
				t.Fatal(err)
			}
			return strings.Join(paths(hits), " ")
		},
		write: func(t *testing.T, w *Store) {
			mustApply(t, w, upserts(note("open/q.md", "note 31337")))
			embedAll(t, w, func(text string) []float32 { return clustered(numberAtEnd(text)) })
		},
	},
	"topic members": {
		setUp: func(t *testing.T, w *Store) {
			mustApply(t, w, upserts(note("99 topics/Kitchen.md", "<!-- begin:clippings -->\n[[Knives]] [[Pans]]\n<!-- end:clippings -->\n"),
				note("Knives.md", "knives"), note("Pans.md", "pans"), note("Bowls.md", "bowls")))
		},
		read: func(t *testing.T, s *Store) string {
			hops, err := s.Search().Hops(context.Background(), []string{"knives.md"}, vault.ScopeAll)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, h := range hops {
				if h.Relation == vault.RelationSibling {
					out = append(out, h.To)
				}
			}
			return strings.Join(out, " ")
		},
		write: func(t *testing.T, w *Store) {
			mustApply(t, w, upserts(note("99 topics/Kitchen.md", "<!-- begin:clippings -->\n[[Knives]] [[Pans]] [[Bowls]]\n<!-- end:clippings -->\n")))
		},
		held: func(s *Store) int {
			s.members.mu.Lock()
			defer s.members.mu.Unlock()
			return len(s.members.members)
		},
	},
	"full-text counts": {
		setUp: func(t *testing.T, w *Store) {
			mustApply(t, w, upserts(note("a.md", "apples and pears"), note("b.md", "plums")))
		},
		read: func(t *testing.T, s *Store) string {
			// A word no chunk holds is counted as 0 and left out of the
			// search: a count that outlived the write finds nothing.
			hits, err := s.Search().SearchFTS(context.Background(), "zyzzyva plums", 5, vault.ScopeAll, vault.FieldWeights{})
			if err != nil {
				t.Fatal(err)
			}
			return strings.Join(paths(hits), " ")
		},
		write: func(t *testing.T, w *Store) {
			mustApply(t, w, upserts(note("z.md", "zyzzyva zyzzyva plums")))
		},
		held: func(s *Store) int {
			s.ftsCounts.mu.Lock()
			defer s.ftsCounts.mu.Unlock()
			return len(s.ftsCounts.rows)
		},
	},
}

// TestEveryCacheFollowsWrites lists the store's caches from its after-commit
// hooks, and checks each against a write of the store itself (the hook) and
// a write of another store on the same file (a read-only store runs no hook
// of the writer's, and notices its commits by the versions in the index):
// after a write that changes what a read through the cache answers, the
// next read answers what a new store, which has no cache yet, does.
func TestEveryCacheFollowsWrites(t *testing.T) {
	var names []string
	for _, h := range mustOpen(t, Options{}).commitHooks {
		names = append(names, h.name)
	}
	var probed []string
	for name := range cacheProbes {
		probed = append(probed, name)
	}
	slices.Sort(names)
	slices.Sort(probed)
	if !slices.Equal(names, probed) {
		t.Fatalf("the store's caches are %q, the probes %q: every cache needs a probe", names, probed)
	}
	for _, name := range names {
		p := cacheProbes[name]
		for _, writer := range []string{"this store", "another store"} {
			t.Run(name+"/"+writer, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "index.db")
				opts := Options{Path: path, Space: space512, Sensitivity: Classifier{PersonalPaths: []string{"p/**"}}}
				w := mustOpen(t, opts)
				p.setUp(t, w)
				s := w
				if writer == "another store" {
					ro := opts
					ro.ReadOnly = true
					s = mustOpen(t, ro)
				}
				before := p.read(t, s)
				if p.held != nil && p.held(s) == 0 {
					t.Fatal("the read left nothing in the cache: the test proves nothing")
				}
				p.write(t, w)
				if p.held != nil && s == w {
					if n := p.held(w); n != 0 {
						t.Fatalf("the cache holds %d entries after the store's own write", n)
					}
				}
				after := p.read(t, s)
				ro := opts
				ro.ReadOnly = true
				want := p.read(t, mustOpen(t, ro))
				if after != want || after == before {
					t.Fatalf("before the write %q, after it %q, a new store %q", before, after, want)
				}
			})
		}
	}
}
