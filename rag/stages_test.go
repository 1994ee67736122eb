package rag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/vaultask/vaultask/vault"
)

func chunk(row int64, doc string, ordinal int, score float64) vault.Chunk {
	return vault.Chunk{RowID: row, ChunkID: fmt.Sprintf("c%d", row), DocID: strings.ToLower(doc), Path: doc, Title: strings.TrimSuffix(path.Base(doc), ".md"),
		Ordinal: ordinal, Sensitivity: vault.SensitivityOpen, Embedded: true, Score: score}
}

type fusedRow struct {
	Row         int64
	Sources     string
	VRank, FRnk int
	Distance    float64
}

func fusedRows(hits []Hit) []fusedRow {
	out := make([]fusedRow, len(hits))
	for i, h := range hits {
		out[i] = fusedRow{h.Chunk.RowID, h.Provenance(), h.VectorRank, h.FTSRank, h.Distance}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestFuseByChunk(t *testing.T) {
	t.Parallel()
	vector := []vault.Chunk{chunk(1, "a.md", 0, 0.1), chunk(2, "b.md", 0, 0.2), chunk(3, "c.md", 0, 0.3)}
	fts := []vault.Chunk{chunk(3, "c.md", 0, -9), chunk(4, "d.md", 0, -8), chunk(1, "a.md", 0, -7)}
	got := fuseRanks(vector, fts, fusionOptions{})
	// a: 1/61 + 1/63; c: 1/63 + 1/61 (tie, a first by input order); b: 1/62; d: 1/62.
	want := []fusedRow{
		{1, "vector+fts", 1, 3, 0.1},
		{3, "vector+fts", 3, 1, 0.3},
		{2, "vector", 2, 0, 0.2},
		{4, "fts", 0, 2, 0},
	}
	if diff := cmp.Diff(want, fusedRows(got)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if !got[0].HasDistance || got[3].HasDistance {
		t.Fatal("only vector hits carry a distance")
	}
	if s := 1.0/61 + 1.0/63; !near(got[0].Score, s) {
		t.Fatalf("score = %v, want %v", got[0].Score, s)
	}
}

// A chunk not embedded yet gets a vector vote at its full-text rank, only
// when there is a vector ranking: a note just written, first in full text,
// beats the nearest vector hit rather than tying with it.
func TestFuseImputesTheVectorRankOfAChunkNotEmbeddedYet(t *testing.T) {
	t.Parallel()
	fresh := chunk(9, "Recipes/Focaccia.md", 0, -9)
	fresh.Embedded = false
	vector := []vault.Chunk{chunk(1, "Recipes/Risotto.md", 0, 0.4)}
	got := fuseRanks(vector, []vault.Chunk{fresh}, fusionOptions{})
	if got[0].Chunk.RowID != 9 || !near(got[0].Score, 2.0/61) || got[0].Provenance() != "fts" {
		t.Errorf("fused %+v, want the fresh note first with 2/61, its provenance full text", fusedRows(got))
	}
	if got := fuseRanks(nil, []vault.Chunk{fresh}, fusionOptions{}); !near(got[0].Score, 1.0/61) {
		t.Errorf("without a vector ranking: score %v, want 1/61", got[0].Score)
	}
	if got := fuseRanks(vector, []vault.Chunk{fresh}, fusionOptions{ByNote: true}); got[0].Chunk.RowID != 9 || !near(got[0].Score, 2.0/61) {
		t.Errorf("by note: %+v", fusedRows(got))
	}
	// Full text read it before its vectors were in, the vector search after:
	// its own vector vote counts, no second one.
	embeddedSince := fresh
	embeddedSince.Score = 0.45
	got = fuseRanks([]vault.Chunk{vector[0], embeddedSince}, []vault.Chunk{fresh}, fusionOptions{})
	if got[0].Chunk.RowID != 9 || !near(got[0].Score, 1.0/62+1.0/61) {
		t.Errorf("found by both arms: %+v, want the fresh note first with 1/62 + 1/61", fusedRows(got))
	}
}

// Far vector hits do not vote: the nearest keep their ranks, the rest are
// left out, and 0 keeps them all.
func TestVoting(t *testing.T) {
	t.Parallel()
	vector := []vault.Chunk{chunk(1, "a.md", 0, 0.3), chunk(2, "b.md", 0, 0.5), chunk(3, "c.md", 0, 0.51), chunk(4, "d.md", 0, 0.9)}
	var kept []int64
	for _, h := range votingHits(vector, 0.5) {
		kept = append(kept, h.RowID)
	}
	if !slices.Equal(kept, []int64{1, 2}) {
		t.Errorf("voters within 0.5 = %v, want [1 2]", kept)
	}
	if got := votingHits(vector, 0); len(got) != 4 {
		t.Errorf("no limit kept %d of 4", len(got))
	}
	if got := votingHits(vector, 0.1); len(got) != 0 {
		t.Errorf("a limit below every distance kept %d", len(got))
	}
	// A far vector hit no longer outranks a full-text hit.
	fts := []vault.Chunk{chunk(5, "e.md", 0, -3)}
	if got := fuseRanks(votingHits(vector, 0.2), fts, fusionOptions{}); len(got) != 1 || got[0].Chunk.RowID != 5 {
		t.Errorf("fused with no voter = %v", fusedRows(got))
	}
}

// A full-text weight above 1 lets a full-text rank outweigh the same
// vector rank: the tie of a and c above breaks for c, and d passes b.
func TestFuseWeighsFullText(t *testing.T) {
	t.Parallel()
	vector := []vault.Chunk{chunk(1, "a.md", 0, 0.1), chunk(2, "b.md", 0, 0.2), chunk(3, "c.md", 0, 0.3)}
	fts := []vault.Chunk{chunk(3, "c.md", 0, -9), chunk(4, "d.md", 0, -8), chunk(1, "a.md", 0, -7)}
	got := fuseRanks(vector, fts, fusionOptions{FTSWeight: 2})
	var order []int64
	for _, h := range got {
		order = append(order, h.Chunk.RowID)
	}
	if diff := cmp.Diff([]int64{3, 1, 4, 2}, order); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	if s := 1.0/63 + 2.0/61; !near(got[0].Score, s) {
		t.Fatalf("score = %v, want %v", got[0].Score, s)
	}
}

// Note-level fusion ranks notes by their best chunk; a note's other chunks
// compete on their own chunk-level score.
func TestFuseByNote(t *testing.T) {
	t.Parallel()
	// Note a has the best vector chunk and the third FTS chunk; note b has
	// the two best FTS chunks and the second vector chunk.
	vector := []vault.Chunk{chunk(1, "a.md", 0, 0.1), chunk(5, "b.md", 2, 0.2), chunk(9, "c.md", 0, 0.3)}
	fts := []vault.Chunk{chunk(4, "b.md", 0, -9), chunk(6, "b.md", 1, -8), chunk(2, "a.md", 1, -7)}
	got := fuseRanks(vector, fts, fusionOptions{ByNote: true})
	var order []int64
	for _, h := range got {
		order = append(order, h.Chunk.RowID)
	}
	// Notes a and b both score 1/61 + 1/62 (a tie, broken by doc id), c
	// 1/63. b's other chunks score 1/62 each, a's other chunk 1/63: it ties
	// with c's best chunk and goes first for its better note.
	if diff := cmp.Diff([]int64{1, 4, 5, 6, 2, 9}, order); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	for i, want := range []float64{1.0/61 + 1.0/62, 1.0/61 + 1.0/62, 1.0 / 62, 1.0 / 62, 1.0 / 63, 1.0 / 63} {
		if !near(got[i].Score, want) {
			t.Errorf("hit %d (chunk %d) scores %v, want %v", i, got[i].Chunk.RowID, got[i].Score, want)
		}
	}
	if h := got[1]; h.Provenance() != "fts" || h.FTSRank != 1 || h.HasDistance {
		t.Errorf("chunk 4: provenance %s, FTS rank %d, has distance %v", h.Provenance(), h.FTSRank, h.HasDistance)
	}
}

func TestDiversifyCapsNotesAndIdenticalCopies(t *testing.T) {
	t.Parallel()
	hits := []Hit{
		{Chunk: chunk(1, "a.md", 0, 0)}, {Chunk: chunk(2, "a.md", 1, 0)}, {Chunk: chunk(3, "a.md", 2, 0)},
		{Chunk: chunk(4, "copy of a.md", 0, 0)}, {Chunk: chunk(5, "b.md", 0, 0)}, {Chunk: chunk(6, "b.md", 1, 0)},
	}
	hashes := map[string]string{"a.md": "h1", "copy of a.md": "h1", "b.md": "h2"}
	kept, dropped := capPerNote(hits, 2, hashes)
	ids := func(hs []Hit) []int64 {
		var out []int64
		for _, h := range hs {
			out = append(out, h.Chunk.RowID)
		}
		return out
	}
	if diff := cmp.Diff([]int64{1, 2, 5, 6}, ids(kept)); diff != "" {
		t.Fatalf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{3, 4}, ids(dropped)); diff != "" {
		t.Fatalf("dropped (-want +got):\n%s", diff)
	}
	if kept, dropped := capPerNote(hits, 0, hashes); len(kept) != 6 || len(dropped) != 0 {
		t.Fatal("max_chunks_per_doc = 0 is no cap")
	}
}

func direct(row int64, doc string, score float64) Hit {
	return Hit{Chunk: chunk(row, doc, 0, 0), Score: score, Sources: []Source{FromFTS}}
}

func expandedHit(row int64, doc string, score float64) Hit {
	return Hit{Chunk: chunk(row, doc, 0, 0), Score: score, Sources: []Source{FromGraph}, Graph: &Reach{Relation: vault.RelationSibling, From: "x.md"}}
}

func TestSelectQuota(t *testing.T) {
	t.Parallel()
	cands := []Hit{direct(1, "a.md", 9), expandedHit(2, "g1.md", 8), expandedHit(3, "g2.md", 7), direct(4, "b.md", 6), expandedHit(5, "g3.md", 5), direct(6, "c.md", 4)}
	for _, tc := range []struct {
		name           string
		finalK, slots  int
		final, held    []int64
		expandedInside int
	}{
		{"quota holds back expanded hits", 4, 1, []int64{1, 2, 4, 6}, []int64{3, 5}, 1},
		{"two slots", 4, 2, []int64{1, 2, 3, 4}, nil, 2},
		{"no slots", 3, 0, []int64{1, 4, 6}, []int64{2, 3, 5}, 0},
		// Three direct hits cannot fill six: held-back expanded hits do.
		{"thin-answer exception", 6, 1, []int64{1, 2, 3, 4, 5, 6}, nil, 3},
		{"exception fills only what is missing", 5, 1, []int64{1, 2, 3, 4, 6}, []int64{5}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			final, held := selectFinal(cands, tc.finalK, graphSlots{Graph: tc.slots})
			if diff := cmp.Diff(tc.final, rowIDs(final)); diff != "" {
				t.Errorf("final (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.held, rowIDs(held)); diff != "" {
				t.Errorf("held back (-want +got):\n%s", diff)
			}
			if n := countGraph(final); n != tc.expandedInside {
				t.Errorf("%d expanded hits in the answer, want %d", n, tc.expandedInside)
			}
		})
	}
}

// A member slot takes only a member of a topic note among the hits, first
// before the general graph slots; a member beyond it takes a general slot.
func TestSelectMemberSlots(t *testing.T) {
	t.Parallel()
	member := func(row int64, doc string, score float64) Hit {
		h := expandedHit(row, doc, score)
		h.Graph = &Reach{Relation: vault.RelationMember, From: "99 topics/T.md"}
		return h
	}
	cands := []Hit{direct(1, "99 topics/T.md", 9), expandedHit(2, "link.md", 8), member(3, "clip1.md", 8), member(4, "clip2.md", 8),
		direct(5, "b.md", 6), direct(6, "c.md", 5), direct(7, "d.md", 4)}
	for _, tc := range []struct {
		name                   string
		finalK, slots, members int
		final                  []int64
	}{
		{"a member slot, no graph slot: the link waits, one clipping enters", 4, 0, 1, []int64{1, 3, 5, 6}},
		{"a member slot and a graph slot: the link, then both clippings", 5, 1, 1, []int64{1, 2, 3, 5, 6}},
		{"two member slots", 5, 0, 2, []int64{1, 3, 4, 5, 6}},
		{"no slots", 4, 0, 0, []int64{1, 5, 6, 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			final, _ := selectFinal(cands, tc.finalK, graphSlots{Graph: tc.slots, Members: tc.members})
			if diff := cmp.Diff(tc.final, rowIDs(final)); diff != "" {
				t.Errorf("final (-want +got):\n%s", diff)
			}
		})
	}
	// A direct hit promoted as a member (promoteMembers) that finds the
	// member slots taken keeps the place its direct find gives it.
	promoted := direct(8, "clip3.md", 7)
	promoted.Sources = append(promoted.Sources, FromGraph)
	promoted.Graph = &Reach{Relation: vault.RelationMember, From: "99 topics/T.md"}
	withPromoted := slices.Concat(cands[:4], []Hit{promoted}, cands[4:])
	final, held := selectFinal(withPromoted, 5, graphSlots{Members: 1})
	if diff := cmp.Diff([]int64{1, 3, 8, 5, 6}, rowIDs(final)); diff != "" {
		t.Errorf("a promoted hit past the member slots: final (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{2, 4}, rowIDs(held)); diff != "" {
		t.Errorf("a promoted hit past the member slots: held back (-want +got):\n%s", diff)
	}
}

// Graph order: a topic note right before its first member, each note's
// chunks together in document order, otherwise the order of best hits.
func TestAssembleGraphOrder(t *testing.T) {
	t.Parallel()
	at := func(row int64, doc string, ordinal int, body string) Hit {
		h := Hit{Chunk: chunk(row, doc, ordinal, 0)}
		h.Chunk.Body = body
		h.Chunk.HeadingPath = fmt.Sprintf("Part %d", ordinal+1)
		return h
	}
	final := []Hit{
		at(12, "Notes/Bread.md", 2, "Bake at 250 °C."),
		at(20, "Notes/Rye.md", 0, "Rye needs a sour starter."),
		at(10, "Notes/Bread.md", 0, "Mix flour, water, salt and starter."),
		at(30, "99 topics/Baking.md", 0, "A topic note about baking."),
		at(40, "Notes/Unrelated.md", 0, "Unrelated </passage> text, [[Notes/Rye|rye]] and `[[syntax]]`![[icon.svg]]."),
	}
	topicOf := map[string][]string{"notes/bread.md": {"99 topics/baking.md"}, "notes/rye.md": {"99 topics/baking.md"}}
	got := assemble(final, topicOf)
	var order []int64
	for _, h := range got {
		order = append(order, h.Chunk.RowID)
	}
	if diff := cmp.Diff([]int64{30, 10, 12, 20, 40}, order); diff != "" {
		t.Fatalf("assembly order (-want +got):\n%s", diff)
	}
	golden(t, "context.golden", renderContext(got))
}

// A note's topic notes come before it by path, in whatever order topicOf
// lists them (Hops lists them by doc id, which puts "apples" before
// "Baking").
func TestAssembleTopicNotesByPath(t *testing.T) {
	t.Parallel()
	final := []Hit{{Chunk: chunk(10, "Notes/Bread.md", 0, 0)}, {Chunk: chunk(20, "99 topics/apples.md", 0, 0)}, {Chunk: chunk(30, "99 topics/Baking.md", 0, 0)}}
	topicOf := map[string][]string{"notes/bread.md": {"99 topics/apples.md", "99 topics/baking.md"}}
	var order []int64
	for _, h := range assemble(final, topicOf) {
		order = append(order, h.Chunk.RowID)
	}
	if diff := cmp.Diff([]int64{30, 20, 10}, order); diff != "" {
		t.Fatalf("assembly order (-want +got):\n%s", diff)
	}
}

func TestPlainLinks(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"see [[Command palette]] and [[File explorer#Delete a file|File explorer]]": "see Command palette and File explorer",
		"![[lucide-monitor.svg#icon]] Desktop":                                      " Desktop",
		"![[Embedded note]] and ![[Other.md#Part]]":                                 "Embedded note and Other.md › Part",
		"[[#Heading]] [[Note#^block]] [[]] ![[#^block]]":                            "Heading Note link link",
		"`[[kept]]` and\n```\n[[kept too]]\n```\n[[Gone]]":                          "`[[kept]]` and\n```\n[[kept too]]\n```\nGone",
		// Code inside a link is the link's shown text.
		"[[Functions#hasTag|`hasTag`]] matches `#a`": "`hasTag` matches `#a`",
		// A link is what the index takes for one (vault.Wikilinks): up to
		// the first ]] on its line, the innermost of nested openers.
		"[[a]b]] and [[c [[d]] and [[e\n]]": "a]b and [[c d and [[e\n]]",
	} {
		if got := plainLinks(in); got != want {
			t.Errorf("plainLinks(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, title, want string }{
		{"en/Plugins/File recovery.md", "File recovery", "[[en/Plugins/File recovery|File recovery]]"},
		{"Notes/a.md", "A | B", "[[Notes/a|a]]"},
		{"Notes/a.md", "", "[[Notes/a|a]]"},
		{"Canvas/board.canvas", "board", "[[Canvas/board.canvas|board]]"},
	} {
		if got := Link(tc.path, tc.title); got != tc.want {
			t.Errorf("Link(%q, %q) = %q, want %q", tc.path, tc.title, got, tc.want)
		}
	}
}

func TestParseRerank(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reply string
		n     int
		want  []float64
		err   string
	}{
		{"[7, 0, 3.5]", 3, []float64{7, 0, 3.5}, ""},
		{"```json\n[1,2]\n```", 2, []float64{1, 2}, ""},
		{"  [10]  ", 1, []float64{10}, ""},
		{"[7, 0]", 3, nil, "2 scores for 3 passages"},
		{"[7, 11, 0]", 3, nil, "want 0 to 10"},
		{"[-1]", 1, nil, "want 0 to 10"},
		{`{"scores": [1]}`, 1, nil, "not a JSON array"},
		{"Here are the scores: [1, 2]", 2, nil, "not a JSON array"},
		{"[1, 2] and more", 2, nil, "not a JSON array"},
		{`["7", 1]`, 2, nil, "not a JSON array"},
		{"```json\n[1,2]", 2, nil, "unclosed code fence"},
		{"", 1, nil, "not a JSON array"},
	} {
		got, err := parseRerank(tc.reply, tc.n)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseRerank(%q) error = %v, want %q", tc.reply, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("parseRerank(%q) = %v, %v; want %v", tc.reply, got, err, tc.want)
		}
	}
}

func TestRerankReordersTopKOnly(t *testing.T) {
	t.Parallel()
	hits := []Hit{direct(1, "a.md", 4), direct(2, "b.md", 3), direct(3, "c.md", 2), direct(4, "d.md", 1)}
	model := fakeChat{chat: func(_ context.Context, msgs []Message) (string, error) {
		if !strings.Contains(msgs[1].Content, "[3] c.md") || strings.Contains(msgs[1].Content, "d.md") {
			return "", fmt.Errorf("prompt should list the top 3 only:\n%s", msgs[1].Content)
		}
		return "[2, 9, 2]", nil
	}}
	got, _, err := rerankTop(context.Background(), NewChatReranker(model, RerankOptions{}), "q", hits, 3)
	if err != nil {
		t.Fatal(err)
	}
	var order []int64
	for _, h := range got {
		order = append(order, h.Chunk.RowID)
	}
	if diff := cmp.Diff([]int64{2, 1, 3, 4}, order); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if !got[0].Reranked || got[0].Rerank != 9 || got[3].Reranked {
		t.Fatalf("rerank marks: %+v", got)
	}
}

// A reranker that fails, times out or answers badly leaves the fused order,
// and the trace says so.
func TestRerankFallsBackToFusedOrder(t *testing.T) {
	t.Parallel()
	store := quasarVault(t)
	base := mustRetrieve(t, mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}}), Question{Text: "quasar", AllowWeb: true})
	for name, chat := range map[string]func(ctx context.Context, msgs []Message) (string, error){
		"error":   func(context.Context, []Message) (string, error) { return "", errors.New("status 503") },
		"garbage": func(context.Context, []Message) (string, error) { return "The first passage is best.", nil },
		"timeout": func(ctx context.Context, _ []Message) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Reranker: NewChatReranker(fakeChat{chat: chat}, RerankOptions{Budget: 50 * time.Millisecond})})
			r := mustRetrieve(t, p, Question{Text: "quasar", AllowWeb: true})
			if diff := cmp.Diff(hitPaths(base.Hits), hitPaths(r.Hits)); diff != "" {
				t.Errorf("order changed (-fused +got):\n%s", diff)
			}
			var note string
			for _, s := range r.Trace.Stages {
				if s.Name == "rerank" {
					note = s.Note
				}
			}
			if !strings.Contains(note, "fused order kept") {
				t.Errorf("rerank trace note = %q", note)
			}
		})
	}
	// A good reply reorders, and the trace lists the moves.
	p := mustPipeline(t, Options{Searcher: store.Search(), Embedder: &bagEmbedder{}, Reranker: NewChatReranker(fakeChat{chat: func(_ context.Context, msgs []Message) (string, error) {
		n := strings.Count(msgs[1].Content, "\n[")
		scores := make([]string, n)
		for i := range scores {
			scores[i] = fmt.Sprint(i) // the last passage is the most relevant
		}
		return "[" + strings.Join(scores, ",") + "]", nil
	}}, RerankOptions{})})
	r := mustRetrieve(t, p, Question{Text: "quasar", AllowWeb: true})
	if !r.Hits[0].Reranked || r.Hits[0].Rerank == 0 {
		t.Fatalf("top hit after rerank: %+v", r.Hits[0])
	}
}

func TestFTSText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"How do I recover a deleted file?":      "recover deleted file",
		`"quoted" -minus col:val NEAR(a b) OR*`: "quoted minus col val near b",
		"what is it":                            "what is it", // nothing but stopwords: keep them
		"Hur återställer jag en fil?":           "återställer fil",
		"Silinen notu nasıl geri alırım?":       "silinen notu geri alırım",
		"---":                                   "",
		"C++ and C#":                            "c",
	} {
		if got := FTSText(in); got != want {
			t.Errorf("FTSText(%q) = %q, want %q", in, got, want)
		}
	}
}

// Whatever a person types, the full-text query is safe: only words reach
// FTS5, and the search never fails on syntax.
func FuzzFTSText(f *testing.F) {
	s := mustIndex(f, nil, note("a.md", "# Alpha\n\nThe quick brown fox: NEAR the lazy dog.\n"))
	for _, seed := range []string{`"`, `a"b`, `NEAR(a b)`, `-x`, `col:val`, `a AND OR NOT b`, `*`, `^start`, `(`, `{a b}`, "e\u0301", "I\u0307nternete", "\u0307", `fox -"dog"`, `prelude:fox`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q := FTSText(text)
		for _, r := range q {
			if r != ' ' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				t.Fatalf("FTSText(%q) = %q holds %q", text, q, r)
			}
		}
		if _, err := s.Search().SearchFTS(context.Background(), q, 3, vault.ScopeOpen, vault.FieldWeights{}); err != nil {
			t.Fatalf("SearchFTS(FTSText(%q) = %q): %v", text, q, err)
		}
	})
}

func TestPromptsGolden(t *testing.T) {
	t.Parallel()
	golden(t, "system_prompt.golden", systemPrompt+"\n")
	hits := []Hit{{Chunk: vault.Chunk{Path: "en/Plugins/File recovery.md", Title: "File recovery", HeadingPath: "Restore a snapshot", Body: "Open **Settings → File recovery** and pick a snapshot."}}}
	web := []WebResult{{Title: "Recovering files", URL: "https://example.com/recover", Snippet: "Use the trash."}}
	q := Question{Text: "How do I get an old version back?", History: []Turn{{Role: "user", Text: "I broke a note"}, {Role: "assistant", Text: "Sorry to hear."}}}
	golden(t, "answer_messages.golden", renderMessages(answerMessages(q, "get an old version of a note back", hits, web, true)))
	golden(t, "rewrite_messages.golden", renderMessages(rewriteMessages(q)))
	golden(t, "rerank_messages.golden", renderMessages(rerankMessages("get an old version back", hits)))
}

func renderMessages(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "=== %s\n%s\n", m.Role, m.Content)
	}
	return b.String()
}

func TestParseRewrite(t *testing.T) {
	t.Parallel()
	for reply, want := range map[string]string{
		"quasar jets\n":              "quasar jets",
		"\n  \"quasar jets\"  \nwhy": "quasar jets",
		"“smart quotes”":             "smart quotes",
	} {
		if got, err := parseRewrite(reply); err != nil || got != want {
			t.Errorf("parseRewrite(%q) = %q, %v; want %q", reply, got, err, want)
		}
	}
	for _, bad := range []string{"", "  \n ", strings.Repeat("x", 301)} {
		if _, err := parseRewrite(bad); err == nil {
			t.Errorf("parseRewrite(%.20q…) should fail", bad)
		}
	}
}
