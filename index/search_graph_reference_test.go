package index

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vaultask/vaultask/index/markdown"
	"github.com/vaultask/vaultask/vault"
)

// Neighbours and NearestChunks, each one statement for any number of notes,
// read what the plain walk reads one link and one chunk at a time
// (graphReference), on a vault of shadowed names, path-qualified links,
// aliases, open and personal topic notes, more personal notes than open
// ones, notes without vectors and ties between a note's chunks, under every
// scope, for every note alone and for sets of them.
func TestGraphReadsMatchReference(t *testing.T) {
	s := referenceVault(t)
	ctx := context.Background()
	ref := loadGraphReference(t, s)
	mustShortlist(t, s)

	starts := [][]string{nil, {"gone.md"}, slices.Sorted(func(yield func(string) bool) {
		for id := range ref.docs {
			if !yield(id) {
				return
			}
		}
	})}
	for id := range ref.docs {
		starts = append(starts, []string{id})
	}
	rnd := rand.New(rand.NewPCG(22, 3))
	ids := starts[2]
	for range 30 {
		set := []string{"gone.md"}
		for range 6 {
			set = append(set, ids[rnd.IntN(len(ids))])
		}
		starts = append(starts, set)
	}
	vecs := [][]float32{nil, {1, 0, 0, 0}, {0, 1, 0, 0}, {0.6, 0.6, 0.2, 0}, {0, 0, 0, 1}}

	for _, scope := range []vault.Scope{vault.ScopeAll, vault.ScopeOpen, vault.Scope(7)} {
		reached := 0
		for _, start := range starts {
			got, err := s.Browse().Neighbours(ctx, start, scope)
			if err != nil {
				t.Fatal(err)
			}
			want := ref.neighbours(t, start, scope)
			if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("Neighbours(%q) under %s (-reference +got):\n%s", start, scope, diff)
			}
			reached += len(got)
			hops, err := s.Search().Hops(ctx, start, scope)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(ref.hops(want), hops, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("Hops(%q) under %s (-reference +got):\n%s", start, scope, diff)
			}
			if scope.OpenOnly() {
				for _, n := range got {
					if ref.docs[n.Doc.DocID].Sensitivity != vault.SensitivityOpen || (n.Via != "" && ref.docs[n.Via].Sensitivity != vault.SensitivityOpen) {
						t.Fatalf("Neighbours(%q) under %s reveal a personal note: %+v", start, scope, n)
					}
				}
			}
			for _, vec := range vecs {
				chunks, dist, err := s.Search().NearestChunks(ctx, start, s.queryOf(vec), scope)
				if err != nil {
					t.Fatal(err)
				}
				wantChunks, wantDist := ref.nearestChunks(t, start, vec, scope)
				if diff := gocmp.Diff(wantChunks, chunks, cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("NearestChunks(%q, %v) under %s (-reference +got):\n%s", start, vec, scope, diff)
				}
				if diff := gocmp.Diff(wantDist, dist, cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("NearestChunks(%q, %v) under %s: distances (-reference +got):\n%s", start, vec, scope, diff)
				}
				for _, c := range chunks {
					if scope.OpenOnly() && c.Sensitivity != vault.SensitivityOpen {
						t.Fatalf("NearestChunks(%q) under %s reveal a personal chunk of %s", start, scope, c.Path)
					}
				}
				bounds, err := s.Search().DistanceBounds(ctx, start, s.queryOf(vec), scope)
				if err != nil {
					t.Fatal(err)
				}
				mustBound(t, fmt.Sprintf("DistanceBounds(%q, %v) under %s", start, vec, scope), bounds, vec, wantChunks, wantDist)
			}
		}
		if reached < 100 {
			t.Fatalf("under %s the reads reached %d neighbours: the vault tests too little", scope, reached)
		}
	}
}

// mustBound checks DistanceBounds against the notes' nearest chunks and
// their exact distances: with a query vector, every note with a chunk in
// scope that has a vector is bounded (the shortlist is current), no other
// note is, and each note's bounds hold its distance; without a query
// vector nothing is bounded.
func mustBound(t *testing.T, what string, bounds map[string]vault.DistanceBounds, vec []float32, nearest []vault.Chunk, dist map[int64]float64) {
	t.Helper()
	if vec == nil {
		if bounds != nil {
			t.Fatalf("%s: %v without a query vector", what, bounds)
		}
		return
	}
	withVector := 0
	for _, c := range nearest {
		b, ok := bounds[c.DocID]
		d, has := dist[c.RowID]
		switch {
		case has && !ok:
			t.Fatalf("%s: %s not bounded", what, c.DocID)
		case !has && ok:
			t.Fatalf("%s: %s has no distance, bounded %+v", what, c.DocID, b)
		case has && !(b.Lo <= d && d <= b.Hi):
			t.Fatalf("%s: %s at %v bounded %+v", what, c.DocID, d, b)
		}
		if has {
			withVector++
		}
	}
	if len(bounds) != withVector {
		t.Fatalf("%s: %d notes bounded, %d have a chunk in scope with a vector", what, len(bounds), withVector)
	}
}

// referenceVault is a generated vault for TestGraphReadsMatchReference:
// twelve names, each a note in several folders, open and personal (the
// personal ones the shorter paths, so they win a bare link under ScopeAll
// and must be resolved again under ScopeOpen); links bare, path-qualified
// and by alias; five topic notes, two of them personal; sections whose
// vectors tie inside a note; a deleted note and notes written after the
// embedding, so without vectors; one personal chunk in an open note.
func referenceVault(tb testing.TB) *Store {
	tb.Helper()
	s := mustOpen(tb, Options{Sensitivity: Classifier{PersonalPaths: []string{"P/**", "Journal/**", markdown.TopicFolder + "Private*"}}})
	rnd := rand.New(rand.NewPCG(22, 1))
	names := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"}
	folders := []string{"P/", "Journal/", "P/Deep/", "Notes/", "Notes/Deep/", "Archive/P/", ""}
	aliases := []string{"nick", "alias one", "beta", "shared"}
	words := []string{"red", "green", "blue"}
	link := func() string {
		name := names[rnd.IntN(len(names))]
		switch rnd.IntN(4) {
		case 0:
			return "[[" + strings.TrimSuffix(folders[rnd.IntN(len(folders))], "/") + "/" + name + "]]"
		case 1:
			return "[[" + aliases[rnd.IntN(len(aliases))] + "]]"
		default:
			return "[[" + name + "]]"
		}
	}
	body := func() string {
		var b strings.Builder
		for i := range 1 + rnd.IntN(3) {
			fmt.Fprintf(&b, "## Part %d\n\n%s %s\n\n", i, strings.Repeat(words[rnd.IntN(len(words))]+" words here. ", 120), link())
		}
		return b.String()
	}
	var notes []vault.NoteInput
	for _, name := range names {
		for _, f := range folders {
			if rnd.IntN(2) == 0 {
				continue
			}
			text := body()
			if rnd.IntN(4) == 0 {
				text = "---\naliases: [" + aliases[rnd.IntN(len(aliases))] + "]\n---\n" + text
			}
			notes = append(notes, note(f+name+".md", text))
		}
	}
	for i, topic := range []string{"Baking", "Travel", "Private health", "Reading", "Private money"} {
		var clips strings.Builder
		for range 4 + rnd.IntN(8) {
			clips.WriteString("- " + link() + "\n")
		}
		if i == 1 {
			clips.WriteString("- [[" + markdown.TopicFolder + "Baking]]\n")
		}
		notes = append(notes, note(markdown.TopicFolder+topic+".md", "# "+topic+"\n\nSee "+link()+".\n\n<!-- begin:clippings -->\n"+clips.String()+"<!-- end:clippings -->\n"))
	}
	mustApply(tb, s, upserts(notes...))
	embedAll(tb, s, func(text string) []float32 {
		switch {
		case strings.Contains(text, "red words"):
			return []float32{1, 0, 0, 0}
		case strings.Contains(text, "green words"):
			return []float32{0, 1, 0, 0}
		case strings.Contains(text, "blue words"):
			return []float32{0.5, 0.5, 0.5, 0.5}
		}
		return []float32{0, 0, 1, 0}
	})
	mustApply(tb, s, Batch{Deletes: []string{notes[3].Path}})
	mustApply(tb, s, upserts(note("Notes/Pending.md", body()), note("P/Pending.md", body()), note("Notes/"+names[0]+".md", body())))
	// The first chunk of an open note of several made personal, in both
	// tables as a reclassification writes it: the scope must filter chunks,
	// not only their notes, before it chooses one.
	var chunk int64
	if err := s.writer.QueryRow(`SELECT min(c.rowid) FROM chunks c JOIN docs d ON d.doc_id = c.doc_id
		WHERE d.sensitivity = 'open' AND c.ordinal = 0 AND d.doc_id NOT LIKE '99 topics/%' AND c.embedded = 1
			AND (SELECT count(*) FROM chunks o WHERE o.doc_id = c.doc_id) > 1`).Scan(&chunk); err != nil {
		tb.Fatal(err)
	}
	for _, table := range []string{"chunks"} {
		if _, err := s.writer.Exec(`UPDATE `+table+` SET sensitivity = 'personal' WHERE rowid = ?`, chunk); err != nil {
			tb.Fatal(err)
		}
	}
	if n := count(tb, s, `SELECT count(*) FROM chunks c JOIN docs d ON d.doc_id = c.doc_id WHERE c.sensitivity != d.sensitivity`); n != 1 {
		tb.Fatalf("%d chunks made personal in an open note, want 1", n)
	}
	return s
}

// graphReference walks the link graph and chooses each note's chunk the
// plain way: the index read into memory, every link resolved on its own
// (resolveIn), every chunk's distance read on its own.
type graphReference struct {
	s     *Store
	docs  map[string]vault.Doc
	edges []refEdge
}

type refEdge struct {
	src, kind, target string
	dst               sql.NullString
}

func loadGraphReference(tb testing.TB, s *Store) *graphReference {
	tb.Helper()
	ctx := context.Background()
	docs, err := queryAll(ctx, s.reader, docFields, `SELECT `+docColumns+` FROM docs d`)
	if err != nil {
		tb.Fatal(err)
	}
	edges, err := queryAll(ctx, s.reader, func(e *refEdge) []any { return []any{&e.src, &e.kind, &e.target, &e.dst} },
		`SELECT src, kind, target, dst FROM edges WHERE kind != 'tag'`)
	if err != nil {
		tb.Fatal(err)
	}
	r := &graphReference{s: s, docs: map[string]vault.Doc{}, edges: edges}
	for _, d := range docs {
		r.docs[d.DocID] = d
	}
	return r
}

func (r *graphReference) visible(id string, scope vault.Scope) bool {
	d, ok := r.docs[id]
	return ok && (!scope.OpenOnly() || d.Sensitivity == vault.SensitivityOpen)
}

// dst is where e leads under scope: its resolved note, or under ScopeOpen,
// when that is personal, the open note its target resolves to ("" for
// none).
func (r *graphReference) dst(tb testing.TB, e refEdge, scope vault.Scope) string {
	if !e.dst.Valid {
		return ""
	}
	if _, ok := r.docs[e.dst.String]; !ok {
		return ""
	}
	if r.visible(e.dst.String, scope) {
		return e.dst.String
	}
	id, err := resolveIn(context.Background(), r.s.reader, e.target, scope)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

func (r *graphReference) neighbours(tb testing.TB, ids []string, scope vault.Scope) []vault.Neighbour {
	var out []vault.Neighbour
	seen := map[vault.Neighbour]bool{}
	for _, start := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		if !r.visible(start, scope) {
			continue
		}
		add := func(via, to string, rel vault.Relation) {
			n := vault.Neighbour{From: start, Relation: rel, Via: via, Doc: r.docs[to]}
			if to != start && r.visible(to, scope) && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
		for _, e := range r.edges {
			to := r.dst(tb, e, scope)
			switch {
			case e.kind == markdown.KindTopic && to == start:
				add("", e.src, vault.RelationTopic)
				if !r.visible(e.src, scope) {
					continue
				}
				for _, m := range r.edges {
					if m.kind == markdown.KindTopic && m.src == e.src {
						if sib := r.dst(tb, m, scope); sib != "" {
							add(e.src, sib, vault.RelationSibling)
						}
					}
				}
			case e.kind == markdown.KindWikilink && to == start:
				add("", e.src, vault.RelationBacklink)
			}
			switch {
			case e.kind == markdown.KindTopic && e.src == start && to != "":
				add("", to, vault.RelationMember)
			case e.kind == markdown.KindWikilink && e.src == start && to != "":
				add("", to, vault.RelationLink)
			}
		}
	}
	rank := []vault.Relation{vault.RelationTopic, vault.RelationMember, vault.RelationSibling, vault.RelationLink, vault.RelationBacklink}
	slices.SortFunc(out, func(a, b vault.Neighbour) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(slices.Index(rank, a.Relation), slices.Index(rank, b.Relation)),
			cmp.Compare(a.Doc.Path, b.Doc.Path), cmp.Compare(a.Via, b.Via))
	})
	return out
}

// hops are the reference's neighbours as Hops returns them: by doc id,
// each start's in order of relation, then doc id, then the topic note.
func (r *graphReference) hops(nb []vault.Neighbour) []vault.Hop {
	out := make([]vault.Hop, len(nb))
	for i, n := range nb {
		out[i] = vault.Hop{From: n.From, Relation: n.Relation, Via: n.Via, To: n.Doc.DocID}
	}
	rank := []vault.Relation{vault.RelationTopic, vault.RelationMember, vault.RelationSibling, vault.RelationLink, vault.RelationBacklink}
	slices.SortFunc(out, func(a, b vault.Hop) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(slices.Index(rank, a.Relation), slices.Index(rank, b.Relation)),
			cmp.Compare(a.To, b.To), cmp.Compare(a.Via, b.Via))
	})
	return out
}

func (r *graphReference) nearestChunks(tb testing.TB, ids []string, vec []float32, scope vault.Scope) ([]vault.Chunk, map[int64]float64) {
	ctx := context.Background()
	blob := encodeVector(vec)
	var out []vault.Chunk
	dist := map[int64]float64{}
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		if !r.visible(id, scope) {
			continue
		}
		type chunk struct {
			rowid int64
			sens  string
		}
		chunks, err := queryAll(ctx, r.s.reader, func(c *chunk) []any { return []any{&c.rowid, &c.sens} },
			`SELECT rowid, sensitivity FROM chunks WHERE doc_id = ? ORDER BY ordinal`, id)
		if err != nil {
			tb.Fatal(err)
		}
		var best int64
		var bestDist sql.NullFloat64
		for _, c := range chunks {
			if scope.OpenOnly() && c.sens != vault.SensitivityOpen {
				continue
			}
			var d sql.NullFloat64
			if vec != nil {
				err := r.s.reader.QueryRowContext(ctx, `SELECT vec_distance_cosine(embedding, ?) FROM vectors WHERE space = (SELECT id FROM spaces WHERE state = 'active') AND chunk = ?`, blob, c.rowid).Scan(&d)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					tb.Fatal(err)
				}
			}
			if best == 0 || (d.Valid && (!bestDist.Valid || d.Float64 < bestDist.Float64)) {
				best, bestDist = c.rowid, d
			}
		}
		if best == 0 {
			continue
		}
		hit, err := queryAll(ctx, r.s.reader, hitFields, `SELECT `+hitColumns+`, 0.0 FROM chunks c JOIN docs d ON d.doc_id = c.doc_id WHERE c.rowid = ?`, best)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, hit...)
		if bestDist.Valid {
			dist[best] = bestDist.Float64
		}
	}
	return out, dist
}
