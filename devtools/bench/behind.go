package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/vaultask/vaultask/tstest/livesyncput"
)

// smallCap caps the wait for a small note written behind a big one, longer
// than vectorCap: the wait it measures was 10–46 s with bge (issue 40).
const smallCap = 60 * time.Second

// behindResult is what one big note's size measured: the big note written
// to found by FTS, and the small note written after it to found by each arm.
type behindResult struct {
	bigFTS, fts, vec []float64
}

// bigNoteText is a note of about size bytes in sections of a few
// paragraphs, as a long clipping or an export is, with token in its first
// line so that full-text search tells when it is indexed.
func bigNoteText(token string, size, seed int) string {
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	var b strings.Builder
	fmt.Fprintf(&b, "# Big note %d\n\n%s %s\n", seed, token, paragraph(r, 3))
	for s := 0; b.Len() < size; s++ {
		fmt.Fprintf(&b, "\n## %s the %s (%d)\n\n", capitalize(pick(r, verbs)), pick(r, nouns), s)
		for range 3 {
			b.WriteString(paragraph(r, 6) + "\n\n")
		}
	}
	return b.String()
}

// behindBig measures, through serve with m (already caught up), small
// notes each written after a new revision of a big note of each of the
// size's big sizes: the big note's revision is written and found by full
// text (so the embedder has its chunks), then after 0–2 s a one-line note,
// timed until found by full text and then by vector. The big notes are
// deleted at the end.
func (r *run) behindBig(ctx context.Context, mcp *mcpClient, lp *livesyncput.Client, tag string) (map[int]*behindResult, error) {
	out := map[int]*behindResult{}
	for _, size := range r.sz.bigNotes {
		res := &behindResult{}
		big := fmt.Sprintf("Big/%s %d KB.md", tag, size>>10)
		for i := range r.sz.behind {
			token := fmt.Sprintf("big%sx%dx%d", tag, size>>10, i)
			t0 := time.Now()
			if err := lp.Put(ctx, big, bigNoteText(token, size, i), false); err != nil {
				return nil, err
			}
			_, d, err := pollUntil(ctx, t0, smallCap, func() (bool, error) {
				hits, err := mcp.search(ctx, token, 8)
				return found(hits, big, "fts"), err
			})
			if err != nil {
				return nil, err
			}
			res.bigFTS = append(res.bigFTS, ms(d))
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Millisecond)
			fts, vec, err := r.smallBehind(ctx, mcp, lp, fmt.Sprintf("small%sx%dx%d", tag, size>>10, i))
			if err != nil {
				return nil, err
			}
			res.fts, res.vec = append(res.fts, fts), append(res.vec, vec)
		}
		if err := lp.Delete(ctx, big); err != nil {
			return nil, err
		}
		out[size] = res
		r.log.Info("behind a big note", keyModel, tag, keySize, size, keyEdits, len(res.vec))
	}
	return out, nil
}

// smallBehind writes a one-line note with token and times it until found
// by full text, then by vector, in ms (the cap on a miss).
func (r *run) smallBehind(ctx context.Context, mcp *mcpClient, lp *livesyncput.Client, token string) (fts, vec float64, err error) {
	path := "Small/" + token + ".md"
	line := token + " " + sentence(rand.New(rand.NewPCG(uint64(len(token)), 3)))
	t0 := time.Now()
	if err := lp.Put(ctx, path, line+"\n", false); err != nil {
		return 0, 0, err
	}
	_, f, err := pollUntil(ctx, t0, smallCap, func() (bool, error) {
		hits, err := mcp.search(ctx, token, 8)
		return found(hits, path, "fts"), err
	})
	if err != nil {
		return 0, 0, err
	}
	_, v, err := pollUntil(ctx, t0, smallCap, func() (bool, error) {
		hits, err := mcp.search(ctx, line, 20)
		return found(hits, path, "vector"), err
	})
	return ms(f), ms(v), err
}

// behindRows adds what behindBig measured with m.
func (r *run) behindRows(s *Section, m *modelRun, res map[int]*behindResult) {
	for _, size := range r.sz.bigNotes {
		x, at := res[size], fmt.Sprintf("behind a %s note, %s", kb(size), m.label)
		s.dist("big note written → found by FTS through serve, "+at, "ms", x.bigFTS)
		s.dist("small note written → found by FTS through serve, "+at, "ms", x.fts)
		row := s.dist("small note written → found by vector search through serve, "+at, "ms", x.vec).target("p99 < 5 s", p99, 5000, false)
		misses := 0
		for _, v := range x.vec {
			if v >= ms(smallCap) {
				misses++
			}
		}
		row.Note = fmt.Sprintf("misses at the %v cap: %d of %d", smallCap, misses, len(x.vec))
	}
}

// kb names a size in KB or MB.
func kb(size int) string {
	if size >= 1<<20 {
		return fmt.Sprintf("%d MB", size>>20)
	}
	return fmt.Sprintf("%d KB", size>>10)
}

// sizesText lists sizes as kb names them.
func sizesText(sizes []int) string {
	names := make([]string, len(sizes))
	for i, s := range sizes {
		names[i] = kb(s)
	}
	return strings.Join(names, " and ")
}
