package rag

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vaultask/vaultask/vault"
)

// TermCounter counts the chunks in scope that hold each of terms (a word,
// or a word's prefix ending in "*"), and the chunks in scope.
type TermCounter interface {
	TermRows(ctx context.Context, terms []string, scope vault.Scope) (rows []int64, total int64, err error)
}

// The features coverageFeatures computes, which a CoverageModel weighs
// (reports/RETRIEVAL.md measures these and the others tried):
const (
	// FeatureNearest is the cosine distance of the vector search's nearest
	// chunk: an off-topic question lies far from everything.
	FeatureNearest = "d1"
	// FeatureNearestForeign is FeatureNearest for a question in Swedish or
	// Turkish, 0 otherwise: an English-only model places those near
	// anything, so their distance says less.
	FeatureNearestForeign = "d1_foreign"
	// FeatureForeign is 1 for a question in Swedish or Turkish.
	FeatureForeign = "foreign"
	// FeatureAbsent is the share of the question's word weight (idf) that
	// no chunk in scope holds: a key word the vault lacks altogether.
	FeatureAbsent = "absent"
	// FeatureShare is the share of the question's word weight that the
	// three best notes (the fused direct hits) hold.
	FeatureShare = "share_top3"
	// FeatureNamesMissed is the share of the names the question uses
	// (Calendly, YNAB, monday.com) that the three best notes lack: the
	// shape of "is there a plugin for X" when the vault has none.
	FeatureNamesMissed = "ent_miss"
	// FeatureAgree is 1 when the two searches agree: the vector search's
	// nearest note is among the full-text search's first three notes, or
	// the other way round.
	FeatureAgree = "agree"
	// FeatureFTSShare and FeatureFTSNamesMissed are FeatureShare and
	// FeatureNamesMissed over the full-text search's three best notes
	// alone, the same with or without a query vector: what the full-text
	// fit reads.
	FeatureFTSShare       = "fshare_top3"
	FeatureFTSNamesMissed = "fent_miss"
)

// coverageFeatureNames are the features a CoverageModel may weigh.
var coverageFeatureNames = map[string]bool{
	FeatureNearest: true, FeatureNearestForeign: true, FeatureForeign: true, FeatureAbsent: true, FeatureShare: true,
	FeatureNamesMissed: true, FeatureAgree: true, FeatureFTSShare: true, FeatureFTSNamesMissed: true,
}

// questionWord is one content word of a question with what the vault
// says of it.
type questionWord struct {
	word string
	key  string  // what it is matched by: the word, or its stem as a prefix
	rows int64   // chunks in scope holding it
	idf  float64 // ln((N+1)/(rows+1)) / ln(N+1): 1 for a word the vault lacks, near 0 for one every chunk holds
}

// matches reports whether a sorted list of a text's words holds w.
func (w questionWord) matches(sorted []string) bool {
	i, _ := slices.BinarySearch(sorted, w.key)
	if i >= len(sorted) {
		return false
	}
	if w.key == w.word {
		return sorted[i] == w.word
	}
	return strings.HasPrefix(sorted[i], w.key)
}

// stemKey is what a word is matched by: a word of up to five letters as it
// is, a longer one by a prefix that drops up to three letters of ending
// ("plugins", "plugin" → "plugi"), so that inflected forms meet without a
// stemmer for each language.
func stemKey(w string) (key string, prefix bool) {
	n := utf8.RuneCountInString(w)
	if n <= 5 {
		return w, false
	}
	i := 0
	for range max(5, n-3) {
		_, size := utf8.DecodeRuneInString(w[i:])
		i += size
	}
	return w[:i], true
}

// contentWords are the question's searched words (FTSText), each with its
// key and its counts in scope.
func contentWords(ctx context.Context, tc TermCounter, query string, scope vault.Scope) ([]questionWord, error) {
	var out []questionWord
	var terms []string
	for _, w := range strings.Fields(FTSText(query)) {
		key, prefix := stemKey(w)
		out = append(out, questionWord{word: w, key: key})
		if prefix {
			key += "*"
		}
		terms = append(terms, key)
	}
	if len(out) == 0 {
		return nil, nil
	}
	rows, total, err := tc.TermRows(ctx, terms, scope)
	if err != nil {
		return nil, err
	}
	norm := math.Log(float64(total) + 1)
	for i := range out {
		out[i].rows = rows[i]
		if norm > 0 {
			out[i].idf = math.Log((float64(total)+1)/(float64(rows[i])+1)) / norm
		}
	}
	return out, nil
}

// sortedWords are the distinct words of the chunks' text (title, heading
// path, prelude and body), sorted.
func sortedWords(chunks ...vault.Chunk) []string {
	var all []string
	for _, c := range chunks {
		all = append(all, words(c.Title+"\n"+c.HeadingPath+"\n"+c.Prelude+"\n"+c.Body)...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// idfShare is the share of the words' idf that the text (sorted words)
// holds; 1 when the words weigh nothing.
func idfShare(ws []questionWord, sorted []string) float64 {
	var in, all float64
	for _, w := range ws {
		all += w.idf
		if w.matches(sorted) {
			in += w.idf
		}
	}
	if all == 0 {
		return 1
	}
	return in / all
}

// missedShare is the share of names that the text (sorted words) lacks; 0
// without names.
func missedShare(names []questionWord, sorted []string) float64 {
	if len(names) == 0 {
		return 0
	}
	missed := 0
	for _, w := range names {
		if !w.matches(sorted) {
			missed++
		}
	}
	return float64(missed) / float64(len(names))
}

// coverageFeatures are what the coverage judgement reads of a question's
// retrieval, by name: the question (query, its content words ws), the
// vector search's chunks (none without a query vector), the full-text
// search's, and the fused direct hits.
func coverageFeatures(query string, ws []questionWord, vector, fts []vault.Chunk, direct []Hit) map[string]float64 {
	f := map[string]float64{FeatureNearest: 1}
	if lang := language(query); lang != "" && lang != "en" {
		f[FeatureForeign] = 1
	}
	var absent, all float64
	for _, w := range ws {
		all += w.idf
		if w.rows == 0 {
			absent += w.idf
		}
	}
	if all > 0 {
		f[FeatureAbsent] = absent / all
	}
	names := nameWords(query, ws)
	var best []vault.Chunk
	for _, h := range direct {
		if !slices.ContainsFunc(best, func(c vault.Chunk) bool { return c.DocID == h.Chunk.DocID }) && len(best) < 3 {
			best = append(best, h.Chunk)
		}
	}
	text := sortedWords(best...)
	f[FeatureShare] = idfShare(ws, text)
	f[FeatureNamesMissed] = missedShare(names, text)
	fd := distinctNotes(fts)
	ftext := sortedWords(fd[:min(3, len(fd))]...)
	f[FeatureFTSShare] = idfShare(ws, ftext)
	f[FeatureFTSNamesMissed] = missedShare(names, ftext)
	if vd := distinctNotes(vector); len(vd) > 0 {
		f[FeatureNearest] = vd[0].Score
		for i := range min(3, len(fd)) {
			if fd[i].DocID == vd[0].DocID {
				f[FeatureAgree] = 1
			}
		}
		for i := range min(3, len(vd)) {
			if len(fd) > 0 && vd[i].DocID == fd[0].DocID {
				f[FeatureAgree] = 1
			}
		}
	}
	f[FeatureNearestForeign] = f[FeatureNearest] * f[FeatureForeign]
	return f
}

// nameWords are the question's words that name something: written with a
// capital letter inside a sentence, in capitals, or with a dot inside
// ("Calendly", "YNAB", "monday.com"). "I" and its contractions name
// nothing.
func nameWords(query string, ws []questionWord) []questionWord {
	named := map[string]bool{}
	sentenceStart := true
	for f := range strings.FieldsSeq(query) {
		t := strings.Trim(f, ".,;:!?¿¡\"'()[]{}")
		starts := sentenceStart
		sentenceStart = strings.ContainsAny(f[len(f)-1:], ".?!:")
		lower := strings.ToLower(t)
		if utf8.RuneCountInString(t) < 2 || strings.HasPrefix(lower, "i'") || strings.HasPrefix(lower, "i’") {
			continue
		}
		upper := 0
		for _, r := range t {
			if unicode.IsUpper(r) {
				upper++
			}
		}
		first, _ := utf8.DecodeRuneInString(t)
		dotted := strings.Contains(t, ".") && strings.IndexFunc(t, unicode.IsLetter) >= 0
		if (!starts && unicode.IsUpper(first)) || upper >= 2 || dotted {
			for _, w := range words(t) {
				named[w] = true
			}
		}
	}
	var out []questionWord
	for _, w := range ws {
		if named[w.word] {
			out = append(out, w)
		}
	}
	return out
}

// distinctNotes are each note's first chunk in list, in list order.
func distinctNotes(list []vault.Chunk) []vault.Chunk {
	var out []vault.Chunk
	seen := map[string]bool{}
	for _, c := range list {
		if !seen[c.DocID] {
			seen[c.DocID] = true
			out = append(out, c)
		}
	}
	return out
}
