package rag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vaultask/vaultask/internal/clip"
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
	// Map is set for a link from a map of content: a hit note that links
	// to at least graph_map_min_links notes (see Expand).
	Map bool
}

// From reports whether arm found h.
func (h Hit) From(arm Source) bool { return slices.Contains(h.Sources, arm) }

// rrfK is reciprocal rank fusion's constant: a hit at rank r in a list adds
// 1/(rrfK + r) to its score.
const rrfK = 60

// Fusion is how Fuse weighs the two rankings.
type Fusion struct {
	// ByNote fuses per note rather than per chunk (see Fuse).
	ByNote bool
	// FTSWeight weighs a full-text rank against a vector rank (weight 1);
	// 0 means 1.
	FTSWeight float64
	// Bonus is added to the score of an arm's confident first note, in
	// first-rank votes (Bonus/(rrfK+1)); 0 gives none. Full text is
	// confident when its first note's BM25 leads the second note's by at
	// least FTSMargin of itself, the vector arm when its first note is at
	// least VectorGap nearer than its second (cosine distance). An arm
	// with a single note is confident.
	Bonus, FTSMargin, VectorGap float64
	// Language is the question's language (see Language), "" when unknown.
	// When it is known and not English, ForeignCut is the share of its
	// vote (and bonus) that a vector hit loses when its note is in another
	// known language; 0 keeps every vote whole.
	Language   string
	ForeignCut float64
	// VectorWeight, when above 0, fuses by scores instead (FuseScores): the
	// vector score's weight in a convex combination with the full-text
	// score's.
	VectorWeight float64
}

// Fuse merges the vector and full-text rankings by reciprocal rank fusion,
// keeping each hit's provenance, ranks and vector distance. A full-text
// rank adds f.FTSWeight/(rrfK + rank), a vector rank 1/(rrfK + rank).
//
// With f.ByNote the notes are ranked by fusing per note: a note's rank in an
// arm is the rank of its best chunk among the notes that arm returned, and
// the note's best chunk scores the note's fused score. Each further chunk of
// a note competes on its own chunk-level score, which never exceeds its
// note's, so it stays behind the note's best chunk without taking the
// place of other notes' best ones. Without ByNote every chunk is fused on
// its own; on this project's help-corpus question set that did better at
// every depth (reports/RETRIEVAL.md), so it is the default (retrieval.fusion).
//
// A chunk whose vector is not computed yet (a note just written, waiting
// for the background embedder) cannot be in the vector ranking, so when
// that ranking is there, such a full-text hit is given a vector vote at its
// full-text rank: otherwise a note written a second ago, matching every
// word of the question, would only tie with whatever note is nearest in
// vector space.
//
// Rank fusion forgets how sure each arm was; f.Bonus gives some of it back
// (see Fusion). An English-only embedder places a Swedish or Turkish
// question near notes in any language, so f.ForeignCut lowers the vote of
// a note in another language than the question's.
func Fuse(vector, fts []vault.Chunk, f Fusion) []Hit {
	byRow := map[int64]*Hit{}
	var order []int64
	noteScore := map[string]float64{}
	impute := len(vector) > 0
	vectorWeight := foreignWeights(vector, f)
	add := func(list []vault.Chunk, arm Source, weightOf func(vault.Chunk) float64) {
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
			weight := weightOf(c)
			if arm == FromFTS && impute && !c.Embedded && h.VectorRank == 0 { // a vote only where the vector arm has none
				weight++
			}
			h.Score += weight / float64(rrfK+i+1)
			if _, seen := noteRank[c.DocID]; !seen {
				noteRank[c.DocID] = len(noteRank) + 1
				noteScore[c.DocID] += weight / float64(rrfK+noteRank[c.DocID])
			}
		}
		if f.Bonus > 0 && confident(list, arm, f) {
			first := list[0]
			bonus := weightOf(first) * f.Bonus / float64(rrfK+1)
			byRow[first.RowID].Score += bonus
			noteScore[first.DocID] += bonus
		}
	}
	add(vector, FromVector, func(c vault.Chunk) float64 { return vectorWeight[c.DocID] })
	ftsWeight := cmp.Or(f.FTSWeight, 1)
	add(fts, FromFTS, func(vault.Chunk) float64 { return ftsWeight })
	out := make([]Hit, len(order))
	for i, id := range order {
		out[i] = *byRow[id]
	}
	slices.SortStableFunc(out, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	if !f.ByNote {
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

// confident reports whether an arm's first note clearly leads its second,
// by the arm's own score (list is best first): for full text a relative
// BM25 margin (BM25 is negative, lower is better), for vectors a gap in
// cosine distance.
func confident(list []vault.Chunk, arm Source, f Fusion) bool {
	if len(list) == 0 {
		return false
	}
	first := list[0]
	i := slices.IndexFunc(list, func(c vault.Chunk) bool { return c.DocID != first.DocID })
	if i < 0 {
		return true
	}
	second := list[i].Score
	if arm == FromVector {
		return second-first.Score >= f.VectorGap
	}
	return first.Score < 0 && (second-first.Score)/-first.Score >= f.FTSMargin
}

// foreignWeights is each vector hit's note's vote weight: 1, or 1 −
// f.ForeignCut for a note whose text (its chunks among hits together) is
// in another language than a non-English question.
func foreignWeights(hits []vault.Chunk, f Fusion) map[string]float64 {
	out := make(map[string]float64, len(hits))
	text := map[string]*strings.Builder{}
	for _, c := range hits {
		out[c.DocID] = 1
		if text[c.DocID] == nil {
			text[c.DocID] = &strings.Builder{}
		}
		text[c.DocID].WriteString(c.Title + "\n" + c.HeadingPath + "\n" + c.Body + "\n")
	}
	if f.ForeignCut <= 0 || f.Language == "" || f.Language == "en" {
		return out
	}
	for doc, b := range text {
		if lang := Language(b.String()); lang != "" && lang != f.Language {
			out[doc] = 1 - min(f.ForeignCut, 1)
		}
	}
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

// stopwordsOf are each of the corpus's languages' most common words. They
// are dropped from the full-text query: in an OR query every common word
// still adds to a long chunk's BM25, which on the help corpus cost the top
// rank about 6 points in 100. They also tell a text's language (Language).
var stopwordsOf = map[string][]string{
	"en": strings.Fields(`a about after all also am an and any are as at be been before being but by can could did do
		does doing down for from get got had has have having he her here hers him his how i if in into is it its just
		me more most my no nor not of off on once only or other our out over own same she should so some such than
		that the their them then there these they this those through to too under until up very was we were what when
		where which while who whom why will with would you your yours`),
	"sv": strings.Fields(`och att det som en på är av för med till den har de inte om ett men var jag sig från vi så kan
		när ska eller hur vad vilken vilka min mitt mina din ditt dina du ni dem denna detta dessa`),
	"tr": strings.Fields(`bir ve bu da de ile için mi mı mu mü ne nasıl nedir ben sen o biz siz onlar şu gibi daha çok
		ama veya ya her hangi kadar sonra önce olarak olan`),
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, list := range stopwordsOf {
		for _, w := range list {
			m[w] = true
		}
	}
	return m
}()

// letterOf maps a letter only one of the languages uses to its language.
var letterOf = map[rune]string{'å': "sv", 'ä': "sv", 'ı': "tr", 'ğ': "tr", 'ş': "tr", 'ç': "tr", 'ü': "tr"}

// languageOf maps a stopword to its language; a word common to two
// languages tells nothing, nor does English "i", Swedish for "in".
var languageOf = func() map[string]string {
	m := map[string]string{}
	for lang, list := range stopwordsOf {
		for _, w := range list {
			if other, ok := m[w]; ok && other != lang {
				m[w] = ""
				continue
			}
			m[w] = lang
		}
	}
	m["i"] = ""
	return m
}()

// Language is text's language among English, Swedish and Turkish ("en",
// "sv", "tr"), told by their stopwords and letters, or "" when the text
// gives fewer than two signs or no language has twice the signs of any
// other: a cheap guess that needs no model and errs towards "don't know".
func Language(text string) string {
	count := map[string]int{}
	for _, w := range words(text) {
		count[languageOf[w]]++
		for _, r := range w {
			count[letterOf[r]]++
		}
	}
	langs := []string{"en", "sv", "tr"}
	slices.SortStableFunc(langs, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
	if n := count[langs[0]]; n < 2 || n < 2*count[langs[1]] {
		return ""
	}
	return langs[0]
}

// foldCase folds a decomposed Turkish dotted capital İ (I + U+0307, as
// NFD text has it) and its lower case to a plain i. strings.ToLower folds
// a precomposed İ to i but keeps the combining dot, which is no letter, so
// the word split at it: "İnternete" searched "i" (a stopword) and
// "nternete", which no note has.
var foldCase = strings.NewReplacer("I\u0307", "i", "i\u0307", "i")

// words are text's lower-cased words: runs of letters and digits, split
// at anything else, as FTS5's unicode61 tokenizer splits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(foldCase.Replace(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

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
// the index quotes each word again.
func FTSText(query string) string {
	count := map[string]int{}
	var all, kept []string
	for _, w := range words(query) {
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
func rewriteMessages(q Question) []Message {
	var b strings.Builder
	b.WriteString("Conversation:\n")
	for _, t := range recentTurns(q) {
		fmt.Fprintf(&b, "%s: %s\n", t.Role, oneLine(t.Text, 600))
	}
	fmt.Fprintf(&b, "\nLast message: %s", oneLine(q.Text, 600))
	return []Message{{Role: "system", Content: rewriteSystem}, {Role: "user", Content: b.String()}}
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
