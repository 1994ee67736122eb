package index

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/vaultask/vaultask/vault"
)

// How SearchFTS finds the k best chunks without scoring every chunk that
// holds a word of the question.
//
// FTS5's bm25() gives a word in n of the table's N rows the weight idf =
// log((N − n + 0.5) / (n + 0.5)), floored at 1e-6, and that word adds less
// than idf × (k1 + 1) to any chunk's score however often the chunk holds
// it. So:
//
//   - a word in half the rows or more has the floor idf: it moves no score
//     by more than 2.2e-6, and the passes below leave it out unless every
//     word of the question is such a word (then they all count alike).
//     These are the words whose posting lists are the longest. Only when
//     fewer than k chunks hold another word do the chunks that hold just
//     those words fill the rest, by their scores, as they did before. A
//     word in no row is left out too: it adds nothing to any chunk.
//   - a pass scores only the chunks that hold the rarer words, each with
//     its whole score (the other words are still in its query); its k-th
//     best is the k-th best of all when no chunk outside it could score as
//     much, by the ceilings above. When that is not proven the next pass
//     widens, down to every chunk that holds a word, as the query was
//     before: the passes choose how much is scored, never a score or an
//     order.
//
// Every pass filters by scope inside its query, before its limit, and they
// all run in one read transaction, so they see one state of the index.

// bm25K1 is bm25()'s k1 in FTS5 (fts5_aux.c).
const bm25K1 = 1.2

// ftsWords are text's words, lower-cased and deduplicated, in order: runs of
// letters and digits, as FTS5's unicode61 tokenizer splits them. Each is
// quoted as a phrase in a query, so user input can never be FTS5 syntax.
func ftsWords(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		w = strings.ToLower(w)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// ftsFields are chunks_fts's columns, in order, each with its weight.
func ftsFields(w vault.FieldWeights) []struct {
	name   string
	weight float64
} {
	if w == (vault.FieldWeights{}) {
		w = vault.DefaultFieldWeights
	}
	return []struct {
		name   string
		weight float64
	}{{"title", w.Title}, {"aliases", w.Aliases}, {"headings", w.Headings}, {"path", w.Path}, {"topics", w.Topics}, {"body", w.Body}, {"links", w.Links}}
}

// ftsColumns are the column filter that keeps a query to the fields w
// searches ("" when it searches them all) and bm25()'s weights argument,
// numbers formatted here and never user text; ok is false when w searches
// no field.
func ftsColumns(w vault.FieldWeights) (filter, weights string, ok bool) {
	var searched, ws []string
	for _, f := range ftsFields(w) {
		ws = append(ws, strconv.FormatFloat(f.weight, 'g', -1, 64))
		if f.weight > 0 {
			searched = append(searched, f.name)
		}
	}
	if len(searched) == 0 {
		return "", "", false
	}
	if len(searched) < len(ws) {
		filter = "{" + strings.Join(searched, " ") + "} : "
	}
	return filter, strings.Join(ws, ", "), true
}

// SearchFTS returns the k best chunks for text by BM25 over the fields
// weighted by w, restricted to scope inside the query (before the k). The
// words in half the chunks or more count for nothing (bm25() gives them at
// most 2.2e-6) but in ranking the chunks that hold no other word.
func (s *Search) SearchFTS(ctx context.Context, text string, k int, scope vault.Scope, w vault.FieldWeights) ([]vault.Chunk, error) {
	hits, _, err := s.db.searchFTS(ctx, text, k, scope, w)
	return hits, err
}

// searchFTS is SearchFTS, and the FTS5 expressions of the passes it ran, in
// order.
func (s *Store) searchFTS(ctx context.Context, text string, k int, scope vault.Scope, w vault.FieldWeights) ([]vault.Chunk, []string, error) {
	words := ftsWords(text)
	filter, weights, ok := ftsColumns(w)
	if len(words) == 0 || k <= 0 || !ok {
		return nil, nil, nil
	}
	var hits []vault.Chunk
	q := &ftsSearch{filter: filter, weights: weights, k: k, openOnly: scope.OpenOnly()}
	err := s.read(ctx, "fts search", func(tx *sql.Tx) error {
		terms, floor, total, err := s.ftsCounts.terms(ctx, tx, filter, words)
		if err != nil {
			return err
		}
		q.tx, q.total = tx, total
		top, err := q.top(ctx, terms)
		if err != nil {
			return err
		}
		// Every chunk in scope that holds a word above the floor is in top:
		// the chunks that hold only floor words, whose scores a pass over
		// those words alone gives whole, fill the rest.
		if len(top) < k && len(floor) > 0 {
			others, err := q.pass(ctx, or(floor))
			if err != nil {
				return err
			}
			top = q.best(top, others)
		}
		if len(top) == 0 {
			return nil
		}
		hits, err = q.chunks(ctx, top)
		return err
	})
	return hits, q.ran, err
}

// ftsTerm is a word of a query and what bm25() makes of it.
type ftsTerm struct {
	phrase string  // the word quoted
	rows   int64   // rows whose searched fields hold it
	idf    float64 // bm25()'s idf of it
}

// ceiling is more than the term can add to any chunk's score.
func (t ftsTerm) ceiling() float64 { return t.idf * (bm25K1 + 1) }

// bm25IDF is bm25()'s idf of a phrase in rows of total rows, computed as
// fts5Bm25GetData does.
func bm25IDF(rows, total int64) float64 {
	idf := math.Log((float64(total-rows) + 0.5) / (float64(rows) + 0.5))
	if idf <= 0 {
		return 1e-6
	}
	return idf
}

// ftsHit is a chunk's rowid and its bm25() score (lower is better).
type ftsHit struct {
	rowid int64
	score float64
}

// ftsSearch is one full-text search inside a read transaction.
type ftsSearch struct {
	tx       *sql.Tx
	filter   string
	weights  string
	k        int
	openOnly bool
	total    int64    // rows of chunks_fts
	ran      []string // the passes' expressions, in order
}

// top returns the k best chunks in scope for terms (as ftsCounts.terms
// gives them), best first, ties by rowid. A pass runs only when it is
// expected to score at most half the chunks that the last resort would,
// as if words fell into chunks independently.
func (q *ftsSearch) top(ctx context.Context, terms []ftsTerm) ([]ftsHit, error) {
	switch len(terms) {
	case 0:
		return nil, nil
	case 1:
		return q.pass(ctx, or(terms))
	}
	worth := q.expectedAny(terms) / 2
	// reached is a score (as a positive number) that the k-th best is
	// known to reach: 0 until a pass has found k chunks.
	reached := 0.0
	// The chunks that hold every essential word. One that lacks one of
	// them scores less than all the ceilings but that word's, the least
	// of them being the commonest word's.
	if e := essential(terms, 0); e >= 2 {
		need, rest := terms[:e], terms[e:]
		if n := q.expectedAll(need); n >= float64(q.k) && n <= worth {
			hits, err := q.within(ctx, and(need), rest)
			if err != nil || q.proven(hits, sumCeilings(terms)-need[e-1].ceiling()) {
				return hits, err
			}
			reached = q.reached(hits)
		}
	}
	// The chunks that hold any essential word. One that holds none scores
	// less than the other words' ceilings together. A pass that proves
	// nothing still tells what the k-th best reaches, and the next pass
	// takes words enough for that to prove it.
	for e := essential(terms, reached); e < len(terms) && q.expectedAny(terms[:e]) <= worth; e = essential(terms, reached) {
		need, rest := terms[:e], terms[e:]
		hits, err := q.within(ctx, or(need), rest)
		if err != nil || q.proven(hits, sumCeilings(rest)) {
			return hits, err
		}
		// Fewer than k chunks hold an essential word: they are all here
		// with their whole scores, and every other chunk's score is its
		// score by the other words alone, so the k best by those fill the
		// rest.
		if len(hits) < q.k {
			others, err := q.top(ctx, rest)
			if err != nil {
				return nil, err
			}
			return q.best(hits, others), nil
		}
		reached = q.reached(hits)
	}
	return q.pass(ctx, or(terms))
}

// best returns the k best of whole and others, leaving out the chunks of
// others that whole has (whose scores in others are partial).
func (q *ftsSearch) best(whole, others []ftsHit) []ftsHit {
	in := make(map[int64]bool, len(whole))
	for _, h := range whole {
		in[h.rowid] = true
	}
	out := slices.Clone(whole)
	for _, h := range others {
		if !in[h.rowid] {
			out = append(out, h)
		}
	}
	sortHits(out)
	return out[:min(len(out), q.k)]
}

func sortHits(hits []ftsHit) {
	slices.SortFunc(hits, func(a, b ftsHit) int {
		return cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(a.rowid, b.rowid))
	})
}

// essential is how many of terms (rarest first) a pass must take for the
// others' ceilings together to fall below reached, the score the k-th best
// is known to reach: the fewest such. Before any pass has reached a score
// (reached 0), the fewest whose commonest, once in a chunk of average
// length (where it adds its idf), would outweigh the others' ceilings.
func essential(terms []ftsTerm, reached float64) int {
	for e := 1; e < len(terms); e++ {
		target := reached
		if target == 0 {
			target = terms[e-1].idf
		}
		if beats(target, sumCeilings(terms[e:])) {
			return e
		}
	}
	return len(terms)
}

func sumCeilings(terms []ftsTerm) float64 {
	var sum float64
	for _, t := range terms {
		sum += t.ceiling()
	}
	return sum
}

// expectedAll is how many chunks would hold every one of terms if words
// fell into chunks independently.
func (q *ftsSearch) expectedAll(terms []ftsTerm) float64 {
	n := float64(q.total)
	for _, t := range terms {
		n *= float64(t.rows) / float64(q.total)
	}
	return n
}

// expectedAny is how many chunks would hold any of terms if words fell
// into chunks independently.
func (q *ftsSearch) expectedAny(terms []ftsTerm) float64 {
	none := 1.0
	for _, t := range terms {
		none *= 1 - float64(t.rows)/float64(q.total)
	}
	return float64(q.total) * (1 - none)
}

// proven says hits are the k best of all: there are k of them and no
// chunk outside them could score as well as bound.
func (q *ftsSearch) proven(hits []ftsHit, bound float64) bool {
	return len(hits) == q.k && beats(-hits[q.k-1].score, bound)
}

// reached is the score (as a positive number) of the k-th of hits, 0 when
// there are fewer.
func (q *ftsSearch) reached(hits []ftsHit) float64 {
	if len(hits) < q.k {
		return 0
	}
	return -hits[q.k-1].score
}

// beats says a score (as a positive number) is above bound, with a margin
// for the order in which floating point adds up a score's parts.
func beats(score, bound float64) bool { return score > bound*(1+1e-9)+1e-12 }

// within returns the k best chunks in scope among those that match clause
// (an expression of some terms), each with its whole score over those terms
// and rest: a chunk that holds a word of rest has it from a pass with rest
// in its query, and a chunk that holds none has it from clause alone, as a
// word that a chunk lacks adds nothing. A chunk of the first kind outside
// that pass's k best has a partial score here, but one no better than
// those k, so it never displaces one of them.
func (q *ftsSearch) within(ctx context.Context, clause string, rest []ftsTerm) ([]ftsHit, error) {
	hits, err := q.pass(ctx, clause)
	if err != nil || len(rest) == 0 {
		return hits, err
	}
	whole, err := q.pass(ctx, "("+clause+") AND ("+or(rest)+")")
	if err != nil {
		return nil, err
	}
	return q.best(whole, hits), nil
}

// pass returns the k best chunks in scope that match expr, by bm25() over
// expr's phrases, best first, ties by rowid (as the query before the passes
// ordered them). An open-only scope joins each match to its sensitivity,
// inside the query and before the limit, through chunks_scope: the chunk's
// own row would cost a read of the page its text is on.
func (q *ftsSearch) pass(ctx context.Context, expr string) ([]ftsHit, error) {
	q.ran = append(q.ran, expr)
	from := `chunks_fts`
	if q.openOnly {
		from = `chunks_fts JOIN chunks c INDEXED BY chunks_scope ON c.rowid = chunks_fts.rowid AND c.sensitivity = 'open'`
	}
	return queryAll(ctx, q.tx, func(h *ftsHit) []any { return []any{&h.rowid, &h.score} },
		`SELECT chunks_fts.rowid, bm25(chunks_fts, `+q.weights+`) AS score FROM `+from+`
		WHERE chunks_fts MATCH ? ORDER BY score, chunks_fts.rowid LIMIT ?`, q.filter+"("+expr+")", q.k)
}

// chunks reads top's chunks with their notes, in top's order, the scope
// checked again.
func (q *ftsSearch) chunks(ctx context.Context, top []ftsHit) ([]vault.Chunk, error) {
	values := make([]string, len(top))
	args := make([]any, 0, 2*len(top)+1)
	for i, h := range top {
		values[i] = "(?, ?)"
		args = append(args, h.rowid, h.score)
	}
	args = append(args, q.openOnly)
	return queryAll(ctx, q.tx, hitFields, `WITH top(id, score) AS (VALUES `+strings.Join(values, ", ")+`)
		SELECT `+hitColumns+`, top.score
		FROM top JOIN chunks c ON c.rowid = top.id JOIN docs d ON d.doc_id = c.doc_id
		WHERE ? = 0 OR c.sensitivity = 'open'
		ORDER BY top.score, top.id`, args...)
}

func or(terms []ftsTerm) string  { return join(terms, " OR ") }
func and(terms []ftsTerm) string { return join(terms, " AND ") }

func join(terms []ftsTerm, sep string) string {
	phrases := make([]string, len(terms))
	for i, t := range terms {
		phrases[i] = t.phrase
	}
	return strings.Join(phrases, sep)
}

// ftsCounts remembers how many rows of chunks_fts hold each word searched,
// and how many rows there are, for one state of the index. Counting a
// word reads its whole posting list, the cost the passes save, so it is
// done once per word and state. FTS5 rewrites its structure record (row 10
// of chunks_fts_data) whenever the index changes, so that record, read in
// the search's own snapshot, tells whether the counts are the snapshot's,
// whichever process wrote; this process's writes also empty the counts once
// they commit (Store.hooks).
type ftsCounts struct {
	mu      sync.Mutex
	version []byte
	rows    map[string]int64 // by column filter and phrase, and tableRows
}

// tableRows is the key of the table's row count among the phrases' (which
// are quoted).
const tableRows = "rows"

// maxCounted bounds the words remembered for one state of the index.
const maxCounted = 4096

// terms returns words as terms with their counts in tx's snapshot of the
// fields filter keeps, rarest first, without those that no row holds: those
// that fewer than half the rows hold, and the others apart as floor (idf
// 1e-6); or, when every word is a floor word, those as terms and no floor.
func (c *ftsCounts) terms(ctx context.Context, tx *sql.Tx, filter string, words []string) (terms, floor []ftsTerm, total int64, err error) {
	var version []byte
	err = tx.QueryRowContext(ctx, `SELECT block FROM chunks_fts_data WHERE id = 10`).Scan(&version)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, nil, 0, fmt.Errorf("read the full-text structure: %w", err)
	}
	if total, err = c.count(ctx, tx, version, tableRows, `SELECT count(*) FROM chunks`); err != nil {
		return nil, nil, 0, err
	}
	for _, w := range words {
		phrase := `"` + w + `"`
		n, err := c.count(ctx, tx, version, filter+phrase, `SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?`, filter+phrase)
		if err != nil {
			return nil, nil, 0, err
		}
		t := ftsTerm{phrase: phrase, rows: n, idf: bm25IDF(n, total)}
		switch {
		case n == 0:
		case 2*n < total:
			terms = append(terms, t)
		default:
			floor = append(floor, t)
		}
	}
	if len(terms) == 0 {
		terms, floor = floor, nil
	}
	slices.SortStableFunc(terms, func(a, b ftsTerm) int { return cmp.Compare(a.rows, b.rows) })
	return terms, floor, total, nil
}

// clear forgets every count: a write of this process may have changed
// the full-text index (see Store.hooks).
func (c *ftsCounts) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version, c.rows = nil, nil
}

// count returns the count key stands for in version, running query when it
// is not remembered.
func (c *ftsCounts) count(ctx context.Context, tx *sql.Tx, version []byte, key, query string, args ...any) (int64, error) {
	c.mu.Lock()
	if c.rows == nil || !bytes.Equal(c.version, version) {
		c.version, c.rows = bytes.Clone(version), map[string]int64{}
	}
	n, ok := c.rows[key]
	c.mu.Unlock()
	if ok {
		return n, nil
	}
	if err := tx.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", key, err)
	}
	c.mu.Lock()
	if bytes.Equal(c.version, version) && len(c.rows) < maxCounted {
		c.rows[key] = n
	}
	c.mu.Unlock()
	return n, nil
}
