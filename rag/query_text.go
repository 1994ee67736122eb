package rag

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// stopwordsOf are each of the corpus's languages' most common words. They
// are dropped from the full-text query: in an OR query every common word
// still adds to a long chunk's BM25, which on the help corpus cost the top
// rank about 6 points in 100. They also tell a text's language (language).
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

// language is text's language among English, Swedish and Turkish ("en",
// "sv", "tr"), told by their stopwords and letters, or "" when the text
// gives fewer than two signs or no language has twice the signs of any
// other: a cheap guess that needs no model and errs towards "don't know".
func language(text string) string {
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
