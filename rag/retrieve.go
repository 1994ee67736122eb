package rag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vaultask/vaultask/internal/clip"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/vault"
)

// Source is a retrieval arm that found a hit.
type Source string

// The arms, in the order a hit's Sources lists them.
const (
	FromVector Source = "vector"
	FromFTS    Source = "fts"
	FromGraph  Source = "graph"
)

// Hit is one chunk on its way through the pipeline.
type Hit struct {
	Chunk   vault.Chunk
	Sources []Source // the arms that found it (provenance)
	// VectorRank and FTSRank are 1-based ranks in each arm, 0 where the arm
	// did not return the chunk.
	VectorRank, FTSRank int
	// Distance is the cosine distance between the chunk and the query
	// embedding, when HasDistance. Fused scores say nothing about relevance;
	// this does, and the web trigger reads it.
	Distance    float64
	HasDistance bool
	// Score orders hits, higher first: the RRF score for a direct hit,
	// graph_discount × the reaching hit's score for an expanded one.
	Score float64
	// Graph says how an expanded hit was reached; nil for a direct hit.
	Graph *Reach
	// Rerank is the reranker's relevance when Reranked: 0–10 from a chat
	// model, a cross-encoder's own scale (llama-server: raw logits).
	Rerank   float64
	Reranked bool
}

// Reach is how graph expansion reached a note.
type Reach struct {
	Relation vault.Relation
	From     string // path of the hit's note the hop started at
	Via      string // path of the shared topic note, for a sibling
}

// From reports whether arm found h.
func (h Hit) From(arm Source) bool { return slices.Contains(h.Sources, arm) }

// rrfK is reciprocal rank fusion's constant: a hit at rank r in a list adds
// 1/(rrfK + r) to its score.
const rrfK = 60

// Fuse merges the vector and full-text rankings by reciprocal rank fusion,
// keeping each hit's provenance, ranks and vector distance. A full-text
// rank adds ftsWeight/(rrfK + rank), a vector rank 1/(rrfK + rank).
//
// With byNote the notes are ranked by fusing per note: a note's rank in an
// arm is the rank of its best chunk among the notes that arm returned, and
// the note's best chunk scores the note's fused score. Each further chunk of
// a note competes on its own chunk-level score, which never exceeds its
// note's, so it stays behind the note's best chunk without taking the
// place of other notes' best ones. Without byNote every chunk is fused on
// its own; on this project's help-corpus question set that did better at
// every depth (eval/RESULTS.md), so it is the default (retrieval.fusion).
//
// A chunk whose vector is not computed yet (a note just written, waiting
// for the background embedder) cannot be in the vector ranking, so when
// that ranking is there, such a full-text hit is given a vector vote at its
// full-text rank: otherwise a note written a second ago, matching every
// word of the question, would only tie with whatever note is nearest in
// vector space.
func Fuse(vector, fts []vault.Chunk, byNote bool, ftsWeight float64) []Hit {
	byRow := map[int64]*Hit{}
	var order []int64
	noteScore := map[string]float64{}
	impute := len(vector) > 0
	add := func(list []vault.Chunk, arm Source, weight float64) {
		noteRank := map[string]int{}
		for i, c := range list {
			h, ok := byRow[c.RowID]
			if !ok {
				h = &Hit{Chunk: c}
				byRow[c.RowID] = h
				order = append(order, c.RowID)
			}
			h.Sources = append(h.Sources, arm)
			if arm == FromVector {
				h.VectorRank, h.Distance, h.HasDistance = i+1, c.Score, true
			} else {
				h.FTSRank = i + 1
			}
			if arm == FromFTS && impute && !c.Embedded && h.VectorRank == 0 { // a vote only where the vector arm has none
				weight = ftsWeight + 1
			} else if arm == FromFTS {
				weight = ftsWeight
			}
			h.Score += weight / float64(rrfK+i+1)
			if _, seen := noteRank[c.DocID]; !seen {
				noteRank[c.DocID] = len(noteRank) + 1
				noteScore[c.DocID] += weight / float64(rrfK+noteRank[c.DocID])
			}
		}
	}
	add(vector, FromVector, 1)
	add(fts, FromFTS, ftsWeight)
	out := make([]Hit, len(order))
	for i, id := range order {
		out[i] = *byRow[id]
	}
	slices.SortStableFunc(out, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	if !byNote {
		return out
	}
	chunkScore := make(map[int64]float64, len(out))
	best := map[string]bool{}
	for i, h := range out {
		chunkScore[h.Chunk.RowID] = h.Score
		if !best[h.Chunk.DocID] {
			best[h.Chunk.DocID] = true
			out[i].Score = noteScore[h.Chunk.DocID]
		}
	}
	slices.SortStableFunc(out, func(a, b Hit) int {
		da, db := a.Chunk.DocID, b.Chunk.DocID
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(noteScore[db], noteScore[da]), cmp.Compare(da, db),
			cmp.Compare(chunkScore[b.Chunk.RowID], chunkScore[a.Chunk.RowID]))
	})
	return out
}

// Voting is the vector hits that vote in the fusion: those within
// maxDistance of the query, all of them when maxDistance is 0. A vector
// search returns its k nearest whether or not anything is near; a far-off
// hit's reciprocal rank would still push it past full-text hits that match
// the question's words. hits are nearest first, so the voters keep their
// ranks.
func Voting(hits []vault.Chunk, maxDistance float64) []vault.Chunk {
	if maxDistance <= 0 {
		return hits
	}
	n := 0
	for n < len(hits) && hits[n].Score <= maxDistance {
		n++
	}
	return hits[:n]
}

// Diversify keeps at most maxPerDoc chunks of each note, best first, and
// returns the kept and the dropped hits, each in input order. Notes with the
// same content hash (hashOf, by doc id) are the same text at two paths and
// count as one note. maxPerDoc <= 0 keeps everything.
func Diversify(hits []Hit, maxPerDoc int, hashOf map[string]string) (kept, dropped []Hit) {
	if maxPerDoc <= 0 {
		return hits, nil
	}
	count := map[string]int{}
	for _, h := range hits {
		key := h.Chunk.DocID
		if hash := hashOf[key]; hash != "" {
			key = hash
		}
		if count[key] >= maxPerDoc {
			dropped = append(dropped, h)
			continue
		}
		count[key]++
		kept = append(kept, h)
	}
	return kept, dropped
}

// stopwords are dropped from the full-text query: in an OR query every
// common word still adds to a long chunk's BM25, which on the help corpus
// cost the top rank about 6 points in 100. English, Swedish and Turkish,
// the corpus's languages.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a about after all also am an and any are as at be been before being but by can could did do does
		doing down for from get got had has have having he her here hers him his how i if in into is it
		its just me more most my no nor not of off on once only or other our out over own same she should
		so some such than that the their them then there these they this those through to too under until
		up very was we were what when where which while who whom why will with would you your yours
		och att det som en på är av för med till den har de inte om ett men var jag sig från vi så kan
		när ska eller hur vad vilken vilka min mitt mina din ditt dina du ni dem denna detta dessa
		bir ve bu da de ile için mi mı mu mü ne nasıl nedir ben sen o biz siz onlar şu gibi daha çok
		ama veya ya her hangi kadar sonra önce olarak olan`) {
		m[w] = true
	}
	return m
}()

// maxFTSTerms bounds the words of a full-text query. FTS5 advances an OR
// query by visiting every term at every matching row, so its cost grows
// with terms × matches, both of which grow with a pasted text: a 200 KB
// question of 20,000 distinct words took 3.3 s in full-text search alone
// (BenchmarkRetrieveLongQuestion). A typed question has a dozen keywords;
// 64 keeps every one of them.
const maxFTSTerms = 64

// FTSText is the text the pipeline sends to full-text search for query: its
// words, lower-cased, deduplicated, stopwords dropped (all of them kept when
// every word is one), and at most maxFTSTerms of them: past that the words
// the query repeats most, which say what a long pasted text is about, in
// the order they first appear. It holds letters, digits and single spaces
// only, so whatever a person types can never be FTS5 syntax, and
// index.FTSQuery quotes each word again.
func FTSText(query string) string {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	count := map[string]int{}
	var all, kept []string
	for _, w := range words {
		count[w]++
		if count[w] > 1 {
			continue
		}
		all = append(all, w)
		if !stopwords[w] {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		kept = all
	}
	if len(kept) > maxFTSTerms {
		first := make(map[string]int, len(kept))
		for i, w := range kept {
			first[w] = i
		}
		slices.SortStableFunc(kept, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
		kept = kept[:maxFTSTerms]
		slices.SortFunc(kept, func(a, b string) int { return cmp.Compare(first[a], first[b]) })
	}
	return strings.Join(kept, " ")
}

// rewriteSystem asks for a standalone query; kept short because it runs
// before every multi-turn retrieval.
const rewriteSystem = `You turn the last message of a conversation into one standalone search query for the user's notes.
Resolve pronouns and references ("it", "that plugin", "the second one") from the earlier turns.
Reply with the query only: one line, in the language of the last message, no quotes, no explanation.`

// historyTurns is how many earlier turns the rewrite sees.
const historyTurns = 6

// rewriteMessages is the rewrite prompt. When the request may use the web,
// only the user's own turns are shown: an earlier assistant answer may
// quote a personal note, and that text must not shape a query that can
// leave for the web.
func rewriteMessages(q Question) []llm.Message {
	var b strings.Builder
	b.WriteString("Conversation:\n")
	for _, t := range recentTurns(q) {
		fmt.Fprintf(&b, "%s: %s\n", t.Role, oneLine(t.Text, 600))
	}
	fmt.Fprintf(&b, "\nLast message: %s", oneLine(q.Text, 600))
	return []llm.Message{{Role: "system", Content: rewriteSystem}, {Role: "user", Content: b.String()}}
}

// recentTurns are the last historyTurns turns the request may show a model.
func recentTurns(q Question) []Turn {
	var turns []Turn
	for _, t := range q.History {
		if t.Role == "user" || !q.AllowWeb {
			turns = append(turns, t)
		}
	}
	if len(turns) > historyTurns {
		turns = turns[len(turns)-historyTurns:]
	}
	return turns
}

// concatTurns is the rewrite without a model: the last two earlier user
// turns and the question, joined, as many of those turns, newest first, as
// keep the text searched within max bytes.
func concatTurns(q Question, max int) string {
	query := strings.TrimSpace(q.Text)
	added := 0
	for i := len(q.History) - 1; i >= 0 && added < 2; i-- {
		t := q.History[i]
		if t.Role != "user" {
			continue
		}
		text := strings.TrimSpace(t.Text)
		if len(text)+1+len(query) > max {
			break
		}
		query = text + " " + query
		added++
	}
	return query
}

// parseRewrite takes the model's first non-empty line, unquoted, and refuses
// an empty or overlong one.
func parseRewrite(reply string) (string, error) {
	for line := range strings.SplitSeq(reply, "\n") {
		line = strings.Trim(strings.TrimSpace(line), "\"'`“”")
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > 300 {
			return "", fmt.Errorf("rewrite is %d characters long", utf8.RuneCountInString(line))
		}
		return line, nil
	}
	return "", fmt.Errorf("empty rewrite")
}

// oneLine folds whitespace and cuts s hard to max runes (see clip.Text).
func oneLine(s string, max int) string {
	return clip.Text(strings.Join(strings.Fields(s), " "), max, "")
}
