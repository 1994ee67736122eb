package rag

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vaultask/vaultask/vault"
)

// Fused by scores, a note the vector search places a close second keeps its
// place above notes that full text ranks higher by a hair, where rank
// fusion (which sees only the order of each list) lets them through: the
// far paraphrase of issue 42.
func TestFuseScoresKeepsHowFarApartTheScoresAre(t *testing.T) {
	t.Parallel()
	// The vector search: a.md first, b.md a close second, then far.
	vector := []vault.Chunk{chunk(1, "a.md", 0, 0.20), chunk(2, "b.md", 0, 0.21), chunk(3, "c.md", 0, 0.50), chunk(4, "d.md", 0, 0.52)}
	// Full text: c and d hold one word of the question each, barely ahead of b.
	fts := []vault.Chunk{chunk(3, "c.md", 0, -10.0), chunk(4, "d.md", 0, -9.9), chunk(2, "b.md", 0, -9.8), chunk(5, "e.md", 0, -2)}
	byScore := fuseScores(vector, fts, fusionOptions{ByScore: true, VectorWeight: 0.6})
	byRank := fuseRanks(vector, fts, fusionOptions{})
	if got := rowIDs(byScore); !cmp.Equal(got[:2], []int64{2, 1}) {
		t.Errorf("by score: rows %v, want b.md (2) then a.md (1) first", got)
	}
	if got := rowIDs(byRank); got[0] != 3 {
		t.Fatalf("premise: rank fusion puts c.md (3) first, got %v", got)
	}
	// Min-max normalised, b's vector score is (0.52-0.21)/(0.52-0.20) and
	// its full-text score (9.8-2)/(10-2).
	if want := 0.6*(0.52-0.21)/(0.52-0.20) + 0.4*(9.8-2)/(10-2); !near(byScore[0].Score, want) {
		t.Errorf("b.md's score %v, want %v", byScore[0].Score, want)
	}
	if byScore[0].VectorRank != 2 || byScore[0].FTSRank != 3 || !byScore[0].HasDistance {
		t.Errorf("b.md's ranks %d, %d (distance %v): want 2, 3 with its distance", byScore[0].VectorRank, byScore[0].FTSRank, byScore[0].HasDistance)
	}
}

// A chunk not embedded yet takes its full-text score for its vector score
// when there is a vector list, so a note just written is not halved; a
// Swedish question's vote for an English note is cut by ForeignCut.
func TestFuseScoresImputesAndCutsForeignVotes(t *testing.T) {
	t.Parallel()
	fresh := chunk(9, "new.md", 0, -10)
	fresh.Embedded = false
	vector := []vault.Chunk{chunk(1, "a.md", 0, 0.2), chunk(2, "b.md", 0, 0.6)}
	fts := []vault.Chunk{fresh, chunk(2, "b.md", 0, -1)}
	got := fuseScores(vector, fts, fusionOptions{ByScore: true, VectorWeight: 0.6})
	if rowIDs(got)[0] != 9 || !near(got[0].Score, 1) {
		t.Errorf("the fresh chunk: rows %v, score %v; want it first with 1 (both arms' best)", rowIDs(got), got[0].Score)
	}

	sv := chunk(1, "sv.md", 0, 0.3)
	en := chunk(2, "en.md", 0, 0.2)
	sv.Body = "Hur du återställer en anteckning från versionshistoriken i Sync."
	en.Body = "How to restore a note from the version history of the sync service."
	f := fusionOptions{ByScore: true, VectorWeight: 0.6, Language: "sv", ForeignCut: 1}
	got = fuseScores([]vault.Chunk{en, sv, chunk(3, "far.md", 0, 0.6)}, nil, f)
	if rowIDs(got)[0] != 1 {
		t.Errorf("a Swedish question: rows %v, want sv.md (1) above the nearer English note", rowIDs(got))
	}
}

// With note support, a note with two chunks that both match well overtakes
// a note whose one chunk leads by a hair (the demo vault's sourdough
// recipe and starter clipping); without it the hair decides. Only a note's
// second chunk supports its first: a third adds nothing.
func TestFuseScoresNoteSupport(t *testing.T) {
	t.Parallel()
	vector := []vault.Chunk{chunk(1, "clipping.md", 0, 0.17), chunk(2, "recipe.md", 0, 0.18), chunk(3, "recipe.md", 1, 0.20),
		chunk(4, "far.md", 0, 0.50)}
	fts := []vault.Chunk{chunk(1, "clipping.md", 0, -6.6), chunk(2, "recipe.md", 0, -5.9), chunk(3, "recipe.md", 1, -5.6),
		chunk(4, "far.md", 0, -1)}
	without := fuseScores(vector, fts, fusionOptions{ByScore: true, VectorWeight: 0.6})
	with := fuseScores(vector, fts, fusionOptions{ByScore: true, VectorWeight: 0.6, NoteSupport: 0.3})
	if got := rowIDs(without); got[0] != 1 {
		t.Fatalf("premise: without support the clipping (1) is first, got %v", got)
	}
	if got := rowIDs(with); !cmp.Equal(got, []int64{2, 1, 3, 4}) {
		t.Errorf("with support: rows %v, want the recipe's best chunk (2) first, its second (3) after the clipping", got)
	}
	second := score(without, 3)
	if want := score(without, 2) + 0.3*second; !near(score(with, 2), want) {
		t.Errorf("the recipe's best chunk scores %v, want its own %v + 0.3 × its second's %v", score(with, 2), score(without, 2), second)
	}
	for _, row := range []int64{1, 3, 4} {
		if score(with, row) != score(without, row) {
			t.Errorf("row %d: %v with support, %v without; only a note's best chunk gains", row, score(with, row), score(without, row))
		}
	}

	third := append(vector, chunk(5, "recipe.md", 2, 0.21))
	thirdFTS := append(fts, chunk(5, "recipe.md", 2, -5.5))
	withThird := fuseScores(third, thirdFTS, fusionOptions{ByScore: true, VectorWeight: 0.6, NoteSupport: 0.3})
	if got, want := score(withThird, 2), score(fuseScores(third, thirdFTS, fusionOptions{ByScore: true, VectorWeight: 0.6}), 2)+0.3*score(withThird, 3); !near(got, want) {
		t.Errorf("with a third chunk the recipe's best scores %v, want its own + 0.3 × its second's only (%v)", got, want)
	}
}

func score(hits []Hit, row int64) float64 {
	for _, h := range hits {
		if h.Chunk.RowID == row {
			return h.Score
		}
	}
	return -1
}

// BenchmarkFusion times each fusion over what the defaults hand it: 40
// vector and 40 full-text hits from 30 notes, half of them in both lists.
func BenchmarkFusion(b *testing.B) {
	var vector, fts []vault.Chunk
	for i := range 40 {
		vector = append(vector, chunk(int64(i), fmt.Sprintf("n%d.md", i%30), i/30, 0.2+float64(i)/100))
		fts = append(fts, chunk(int64(i+20), fmt.Sprintf("n%d.md", (i+20)%30), (i+20)/30, -10+float64(i)/5))
	}
	for _, c := range []struct {
		name string
		fuse func([]vault.Chunk, []vault.Chunk, fusionOptions) []Hit
		f    fusionOptions
	}{
		{"ranks", fuseRanks, fusionOptions{FTSWeight: 1, Bonus: 2, FTSMargin: 0.15, VectorGap: 0.02}},
		{"scores", fuseScores, fusionOptions{ByScore: true, VectorWeight: 0.65, NoteSupport: 0.3}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.fuse(vector, fts, c.f)
			}
		})
	}
}
