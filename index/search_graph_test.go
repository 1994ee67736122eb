package index

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vaultask/vaultask/vault"
)

// graphVault is a small vault with a topic note, siblings, links and a
// personal corner, classified by the Private/** glob.
func graphVault(tb testing.TB) *Store {
	tb.Helper()
	s := mustOpen(tb, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	mustApply(tb, s, upserts(
		note("99 topics/Baking.md", "# Baking\n\n<!-- begin:clippings -->\n- [[Bread]]\n- [[Starter]]\n- [[Rye]]\n- [[Private/Grandma]]\n<!-- end:clippings -->\n"),
		note("Private/99 topics/Secret.md", "[[Bread]]"),
		note("Recipes/Bread.md", "# Bread\n\nUse the [[Starter]]. See [[Ideas]].\n"),
		note("Recipes/Starter.md", "# Starter\n\nFeed it daily.\n"),
		note("Recipes/Rye.md", "# Rye\n\nDense.\n"),
		note("Private/Grandma.md", "Grandma's bread, see [[Bread]].\n"),
		// Ideas: a personal namesake with the shorter path shadows the open one.
		note("Private/Ideas.md", "secret ideas\n"),
		note("Notes/More/Ideas.md", "open ideas\n"),
		note("Journal.md", "Baked [[Bread]] today.\n"),
	))
	return s
}

type hop struct {
	From, Rel, Via, To string
}

func hops(ns []vault.Neighbour) []hop {
	out := make([]hop, len(ns))
	for i, n := range ns {
		out[i] = hop{n.From, string(n.Relation), n.Via, n.Doc.Path}
	}
	return out
}

func TestNeighboursUnderEachScope(t *testing.T) {
	s := graphVault(t)
	ctx := context.Background()

	all, err := s.Browse().Neighbours(ctx, []string{"recipes/bread.md"}, vault.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	want := []hop{
		{"recipes/bread.md", "topic", "", "99 topics/Baking.md"},
		{"recipes/bread.md", "sibling", "99 topics/baking.md", "Private/Grandma.md"},
		{"recipes/bread.md", "sibling", "99 topics/baking.md", "Recipes/Rye.md"},
		{"recipes/bread.md", "sibling", "99 topics/baking.md", "Recipes/Starter.md"},
		{"recipes/bread.md", "link", "", "Private/Ideas.md"},
		{"recipes/bread.md", "link", "", "Recipes/Starter.md"},
		{"recipes/bread.md", "backlink", "", "Journal.md"},
		{"recipes/bread.md", "backlink", "", "Private/99 topics/Secret.md"},
		{"recipes/bread.md", "backlink", "", "Private/Grandma.md"},
	}
	if diff := cmp.Diff(want, hops(all)); diff != "" {
		t.Fatalf("ScopeAll neighbours (-want +got):\n%s", diff)
	}

	open, err := s.Browse().Neighbours(ctx, []string{"recipes/bread.md"}, vault.ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	want = []hop{
		{"recipes/bread.md", "topic", "", "99 topics/Baking.md"},
		{"recipes/bread.md", "sibling", "99 topics/baking.md", "Recipes/Rye.md"},
		{"recipes/bread.md", "sibling", "99 topics/baking.md", "Recipes/Starter.md"},
		// [[Ideas]] resolves among open notes only.
		{"recipes/bread.md", "link", "", "Notes/More/Ideas.md"},
		{"recipes/bread.md", "link", "", "Recipes/Starter.md"},
		{"recipes/bread.md", "backlink", "", "Journal.md"},
	}
	if diff := cmp.Diff(want, hops(open)); diff != "" {
		t.Fatalf("ScopeOpen neighbours (-want +got):\n%s", diff)
	}

	// A personal start has no neighbours under ScopeOpen.
	if got, err := s.Browse().Neighbours(ctx, []string{"private/grandma.md"}, vault.ScopeOpen); err != nil || len(got) != 0 {
		t.Fatalf("personal start under ScopeOpen: %v, %v", hops(got), err)
	}
}

// A backlink the index resolved to a personal namesake is found again from
// the open note it names under ScopeOpen.
func TestNeighboursBacklinkThroughShadowedName(t *testing.T) {
	s := graphVault(t)
	got, err := s.Browse().Neighbours(context.Background(), []string{"notes/more/ideas.md"}, vault.ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	want := []hop{{"notes/more/ideas.md", "backlink", "", "Recipes/Bread.md"}}
	if diff := cmp.Diff(want, hops(got)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	got, err = s.Browse().Neighbours(context.Background(), []string{"notes/more/ideas.md"}, vault.ScopeAll)
	if err != nil || len(got) != 0 {
		t.Fatalf("ScopeAll: the link resolves to the personal namesake: %v %v", hops(got), err)
	}
}

// Under ScopeOpen a link the index resolved to a personal note is resolved
// again among open notes whatever its shape: a path-qualified link by the
// end of a longer path, a bare name by an open note's alias; out of a start
// and into one.
func TestNeighboursResolveShadowedLinksAmongOpenNotes(t *testing.T) {
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	mustApply(t, s, upserts(
		note("Start.md", "See [[Private/Ideas]] and [[Plans]].\n"),
		note("Private/Ideas.md", "secret ideas\n"),
		note("Archive/Private/Ideas.md", "open ideas\n"),
		note("Private/Plans.md", "secret plans\n"),
		note("Roadmap.md", "---\naliases: [Plans]\n---\nopen roadmap\n"),
	))
	ctx := context.Background()
	for _, c := range []struct {
		start string
		scope vault.Scope
		want  []hop
	}{
		{"start.md", vault.ScopeAll, []hop{{"start.md", "link", "", "Private/Ideas.md"}, {"start.md", "link", "", "Private/Plans.md"}}},
		{"start.md", vault.ScopeOpen, []hop{{"start.md", "link", "", "Archive/Private/Ideas.md"}, {"start.md", "link", "", "Roadmap.md"}}},
		{"roadmap.md", vault.ScopeAll, []hop{}},
		{"roadmap.md", vault.ScopeOpen, []hop{{"roadmap.md", "backlink", "", "Start.md"}}},
		{"archive/private/ideas.md", vault.ScopeAll, []hop{}},
		{"archive/private/ideas.md", vault.ScopeOpen, []hop{{"archive/private/ideas.md", "backlink", "", "Start.md"}}},
	} {
		got, err := s.Browse().Neighbours(ctx, []string{c.start}, c.scope)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, hops(got)); diff != "" {
			t.Errorf("%s under %s (-want +got):\n%s", c.start, c.scope, diff)
		}
	}
}

// The sibling hop goes through a topic note only when scope may see it.
func TestNeighboursNeverThroughPersonalTopic(t *testing.T) {
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"99 topics/Private*"}}})
	mustApply(t, s, upserts(
		note("99 topics/Private health.md", "<!-- begin:clippings -->\n[[Run]] [[Swim]]\n<!-- end:clippings -->\n"),
		note("Run.md", "run"), note("Swim.md", "swim"),
	))
	got, err := s.Browse().Neighbours(context.Background(), []string{"run.md"}, vault.ScopeOpen)
	if err != nil || len(got) != 0 {
		t.Fatalf("siblings through a personal topic note: %v %v", hops(got), err)
	}
	got, err = s.Browse().Neighbours(context.Background(), []string{"run.md"}, vault.ScopeAll)
	if err != nil || len(got) != 2 {
		t.Fatalf("ScopeAll: %v %v", hops(got), err)
	}
}

func TestDeletedNoteIsNoNeighbour(t *testing.T) {
	s := graphVault(t)
	mustApply(t, s, Batch{Deletes: []string{"Recipes/Starter.md", "Journal.md"}})
	got, err := s.Browse().Neighbours(context.Background(), []string{"recipes/bread.md"}, vault.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hops(got) {
		if h.To == "Recipes/Starter.md" || h.To == "Journal.md" {
			t.Fatalf("deleted note reached: %+v", h)
		}
	}
	if res, err := s.Search().ResolveLinks(context.Background(), []string{"Starter"}, vault.ScopeAll); err != nil || len(res) != 0 {
		t.Fatalf("deleted note resolves: %v %v", res, err)
	}
}

func TestResolveLinksUnderScope(t *testing.T) {
	s := graphVault(t)
	ctx := context.Background()
	links := []string{"Ideas", "Recipes/Bread#Method|the bread", "Private/Grandma", "Nowhere", "#Heading", `Rye\`}
	all, err := s.Search().ResolveLinks(ctx, links, vault.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for l, d := range all {
		got[l] = d.Path
	}
	want := map[string]string{"Ideas": "Private/Ideas.md", "Recipes/Bread#Method|the bread": "Recipes/Bread.md", "Private/Grandma": "Private/Grandma.md", `Rye\`: "Recipes/Rye.md"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("ScopeAll (-want +got):\n%s", diff)
	}
	open, err := s.Search().ResolveLinks(ctx, links, vault.ScopeOpen)
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]string{}
	for l, d := range open {
		got[l] = d.Path
	}
	want = map[string]string{"Ideas": "Notes/More/Ideas.md", "Recipes/Bread#Method|the bread": "Recipes/Bread.md", `Rye\`: "Recipes/Rye.md"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("ScopeOpen (-want +got):\n%s", diff)
	}
}

func TestDocsAndNearestChunksUnderScope(t *testing.T) {
	s := mustOpen(t, Options{Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	alpha, beta := strings.Repeat("alpha words here. ", 120), strings.Repeat("beta words there. ", 120)
	long := "## One\n\n" + alpha + "\n\n## Two\n\n" + beta + "\n"
	mustApply(t, s, upserts(note("Open.md", long), note("Copy.md", long),
		note("Twice.md", "## One\n\n"+beta+"\n\n## Two\n\n"+beta+"\n"),
		// Personal notes nearer the query than any open one.
		note("Private/P.md", "## One\n\n"+beta+"\n"), note("Private/Q.md", "## One\n\n"+beta+"\n")))
	embedAll(t, s, func(text string) []float32 {
		if strings.Contains(text, "alpha") {
			return []float32{1, 0, 0, 0}
		}
		return []float32{0, 1, 0, 0}
	})
	// Pending.md has no vector yet.
	mustApply(t, s, upserts(note("Pending.md", "## One\n\n"+alpha+"\n\n## Two\n\n"+beta+"\n")))
	ctx := context.Background()
	ids := []string{"open.md", "copy.md", "private/p.md"}

	docs, err := s.Search().Docs(ctx, ids, vault.ScopeOpen)
	if err != nil || len(docs) != 2 {
		t.Fatalf("Docs ScopeOpen = %+v, %v", docs, err)
	}
	if docs[0].ContentHash != docs[1].ContentHash || docs[0].ContentHash == "" {
		t.Fatalf("identical text should share a content hash: %+v", docs)
	}
	if docs, _ := s.Search().Docs(ctx, ids, vault.ScopeAll); len(docs) != 3 {
		t.Fatalf("Docs ScopeAll = %d docs, want 3", len(docs))
	}

	type nearest struct {
		Path     string
		Ordinal  int
		Distance float64
		Has      bool
	}
	read := func(vec []float32, scope vault.Scope) []nearest {
		t.Helper()
		chunks, dist, err := s.Search().NearestChunks(ctx, []string{"open.md", "twice.md", "pending.md", "private/p.md", "private/q.md", "gone.md"}, s.queryOf(vec), scope)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]nearest, len(chunks))
		for i, c := range chunks {
			d, has := dist[c.RowID]
			out[i] = nearest{c.Path, c.Ordinal, d, has}
			if c.Body == "" || c.Score != 0 {
				t.Fatalf("chunk %+v: want its text and a score of 0", c)
			}
		}
		if len(dist) > len(chunks) {
			t.Fatalf("%d distances for %d chunks", len(dist), len(chunks))
		}
		return out
	}
	// The nearest chunk of each open note, the first on a tie (Twice.md),
	// the first of a note without vectors (Pending.md), never a personal
	// note's however near it is.
	want := []nearest{{"Open.md", 1, 0, true}, {"Pending.md", 0, 0, false}, {"Twice.md", 0, 0, true}}
	if diff := cmp.Diff(want, read([]float32{0, 1, 0, 0}, vault.ScopeOpen), cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Fatalf("ScopeOpen, toward beta (-want +got):\n%s", diff)
	}
	want = []nearest{{"Open.md", 0, 0, true}, {"Pending.md", 0, 0, false}, {"Twice.md", 0, 1, true}}
	if diff := cmp.Diff(want, read([]float32{1, 0, 0, 0}, vault.ScopeOpen), cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Fatalf("ScopeOpen, toward alpha (-want +got):\n%s", diff)
	}
	want = []nearest{{"Open.md", 1, 0, true}, {"Pending.md", 0, 0, false}, {"Private/P.md", 0, 0, true}, {"Private/Q.md", 0, 0, true}, {"Twice.md", 0, 0, true}}
	if diff := cmp.Diff(want, read([]float32{0, 1, 0, 0}, vault.ScopeAll), cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Fatalf("ScopeAll (-want +got):\n%s", diff)
	}
	// Without a query vector: each note's first chunk, no distance.
	want = []nearest{{"Open.md", 0, 0, false}, {"Pending.md", 0, 0, false}, {"Twice.md", 0, 0, false}}
	if diff := cmp.Diff(want, read(nil, vault.ScopeOpen)); diff != "" {
		t.Fatalf("no vector (-want +got):\n%s", diff)
	}
	if _, _, err := s.Search().NearestChunks(ctx, []string{"open.md"}, s.queryOf([]float32{1, 0}), vault.ScopeOpen); err == nil {
		t.Fatal("a query of the wrong dimension: no error")
	}
}

// Whatever a person types, the full-text search never fails on FTS5 syntax.
func FuzzSearchFTS(f *testing.F) {
	s := mustOpen(f, Options{})
	mustApply(f, s, upserts(note("a.md", "# Alpha\n\nThe quick brown fox: NEAR the lazy dog.\n")))
	for _, seed := range []string{`"`, `a"b`, `NEAR(a b)`, `-x`, `col:val`, `a AND OR NOT b`, `*`, `^start`, `(`, `{a b}`, `ﬁ ǅ`, "e\u0301", `a'b`, `+-:"*^()`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, scope := range []vault.Scope{vault.ScopeAll, vault.ScopeOpen} {
			if _, err := s.Search().SearchFTS(context.Background(), text, 3, scope, vault.FieldWeights{}); err != nil {
				t.Fatalf("SearchFTS(%q): %v (words %q)", text, err, ftsWords(text))
			}
		}
	})
}

func BenchmarkNeighbours(b *testing.B) {
	s := mustOpen(b, Options{})
	var notes []vault.NoteInput
	var clips strings.Builder
	for i := 0; i < 200; i++ {
		notes = append(notes, note(fmt.Sprintf("n%03d.md", i), fmt.Sprintf("links [[n%03d]] [[n%03d]]", (i+1)%200, (i+7)%200)))
		fmt.Fprintf(&clips, "[[n%03d]]\n", i)
	}
	notes = append(notes, note("99 topics/All.md", "<!-- begin:clippings -->\n"+clips.String()+"<!-- end:clippings -->\n"))
	mustApply(b, s, upserts(notes...))
	ids := []string{"n001.md", "n050.md", "n100.md", "n150.md"}
	b.ResetTimer()
	for range b.N {
		if _, err := s.Browse().Neighbours(context.Background(), ids, vault.ScopeOpen); err != nil {
			b.Fatal(err)
		}
	}
}

// Hops remembers a topic note's members for as long as the graph stays as
// it is: a write that makes a member personal, adds one or deletes one is
// seen by the next walk, in this process and in a read-only one (another
// process, whose cache no write here touches), and a write of vectors alone
// keeps what is remembered.
func TestSiblingsFollowWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := mustOpen(t, Options{Path: path})
	mustApply(t, s, upserts(
		note("99 topics/Kitchen.md", "<!-- begin:clippings -->\n[[Knives]] [[Pans]] [[Pots]]\n<!-- end:clippings -->\n"),
		note("Knives.md", "knives"), note("Pans.md", "pans"), note("Pots.md", "pots"),
	))
	other := mustOpen(t, Options{Path: path, ReadOnly: true})
	siblings := func(s *Store, scope vault.Scope) []string {
		t.Helper()
		hops, err := s.Search().Hops(ctx, []string{"knives.md"}, scope)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hops {
			if h.Relation == vault.RelationSibling {
				out = append(out, h.To)
			}
		}
		return out
	}
	check := func(step string, open, all []string) {
		t.Helper()
		for _, st := range []*Store{s, other} {
			for i := 0; i < 2; i++ { // the second walk reads what the first remembered
				if diff := cmp.Diff(open, siblings(st, vault.ScopeOpen), cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("%s: siblings under ScopeOpen (-want +got):\n%s", step, diff)
				}
				if diff := cmp.Diff(all, siblings(st, vault.ScopeAll), cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("%s: siblings under ScopeAll (-want +got):\n%s", step, diff)
				}
			}
		}
	}
	check("at first", []string{"pans.md", "pots.md"}, []string{"pans.md", "pots.md"})

	mustApply(t, s, upserts(note("Pans.md", "---\n"+vault.FrontmatterKey+": personal\n---\npans")))
	check("a member made personal", []string{"pots.md"}, []string{"pans.md", "pots.md"})

	mustApply(t, s, upserts(note("Bowls.md", "bowls"),
		note("99 topics/Kitchen.md", "<!-- begin:clippings -->\n[[Knives]] [[Pans]] [[Pots]] [[Bowls]]\n<!-- end:clippings -->\n")))
	check("a member added", []string{"bowls.md", "pots.md"}, []string{"bowls.md", "pans.md", "pots.md"})

	mustApply(t, s, Batch{Deletes: []string{"Pots.md"}})
	check("a member deleted", []string{"bowls.md"}, []string{"bowls.md", "pans.md"})

	before := str(t, s, `SELECT value FROM meta WHERE key = ?`, graphVersionMeta)
	if n := embedAll(t, s, func(string) []float32 { return []float32{1, 0, 0, 0} }); n == 0 {
		t.Fatal("no vectors written")
	}
	if after := str(t, s, `SELECT value FROM meta WHERE key = ?`, graphVersionMeta); after != before {
		t.Fatalf("writing vectors moved the graph version from %s to %s", before, after)
	}
}

// Walks read in transactions, more of them at once than the store has
// connections, beside reads of the pool, on a store that has not read
// before: each runs to the end (a statement prepared on the pool inside a
// transaction, or behind the lock of a first prepare waiting for a
// connection, would wait for one that the transactions hold, until the
// deadline).
func TestConcurrentWalksOnFewConnections(t *testing.T) {
	s := mustOpen(t, Options{Readers: 2, Sensitivity: Classifier{PersonalPaths: []string{"Private/**"}}})
	mustApply(t, s, upserts(
		note("99 topics/Baking.md", "<!-- begin:clippings -->\n[[Bread]] [[Starter]] [[Rye]] [[Private/Grandma]]\n<!-- end:clippings -->\n"),
		note("Recipes/Bread.md", "Use the [[Starter]]."), note("Recipes/Starter.md", "Feed it."),
		note("Recipes/Rye.md", "Dense, see [[Bread]]."), note("Private/Grandma.md", "Her [[Bread]]."),
	))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make(chan error)
	for i := range 8 {
		go func() {
			scope := vault.ScopeFor(i%2 == 0)
			ids := []string{"recipes/bread.md", "recipes/rye.md"}
			var err error
			if i%3 == 0 {
				_, err = s.Search().Docs(ctx, ids, scope)
			}
			if err == nil {
				_, err = s.Search().Hops(ctx, ids, scope)
			}
			if err == nil {
				_, _, err = s.Search().NearestChunks(ctx, ids, s.queryOf(nil), scope)
			}
			if err == nil {
				_, err = s.Browse().Neighbours(ctx, []string{"recipes/starter.md"}, scope)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatalf("a walk failed: %v", err)
		}
	}
}

// A topic note that clips itself, and is a start: its other members are
// its siblings through itself as well as its members, as for any note of
// the topic (the walk through the topic note's own row is no hop).
func TestTopicNoteClippingItself(t *testing.T) {
	s := mustOpen(t, Options{})
	mustApply(t, s, upserts(
		note("99 topics/Tools.md", "<!-- begin:clippings -->\n[[Tools]] [[Saw]] [[Drill]]\n<!-- end:clippings -->\n"),
		note("Saw.md", "saw"), note("Drill.md", "drill"),
	))
	got, err := s.Search().Hops(context.Background(), []string{"99 topics/tools.md"}, vault.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	want := []vault.Hop{
		{From: "99 topics/tools.md", Relation: vault.RelationMember, To: "drill.md"},
		{From: "99 topics/tools.md", Relation: vault.RelationMember, To: "saw.md"},
		{From: "99 topics/tools.md", Relation: vault.RelationSibling, Via: "99 topics/tools.md", To: "drill.md"},
		{From: "99 topics/tools.md", Relation: vault.RelationSibling, Via: "99 topics/tools.md", To: "saw.md"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("hops from a topic note that clips itself (-want +got):\n%s", diff)
	}
}
