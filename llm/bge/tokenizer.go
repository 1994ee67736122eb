package bge

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tokenizer is BERT's uncased WordPiece as Hugging Face tokenizers runs
// bge-small-en-v1.5's tokenizer.json (readTokenizerJSON checks that the
// file asks for exactly this):
//
//   - added tokens ([CLS], [SEP], [MASK], ...) are found in the raw text
//     first, leftmost and then longest, and become their own ids;
//   - BertNormalizer on the rest: NUL, U+FFFD and control characters
//     (Cc, Cf, Co, Cs but tab, newline and return) dropped, whitespace made
//     a space, spaces put around CJK ideographs, then NFD with nonspacing
//     marks dropped, then lowercase;
//   - BertPreTokenizer: words split at whitespace, and every punctuation
//     character (ASCII's and Unicode's P*) a word of its own;
//   - WordPiece: each word split greedily into the longest vocabulary
//     pieces, later pieces spelled with the "##" prefix; a word with a part
//     no piece covers, or longer than maxWordChars characters, is [UNK].
type tokenizer struct {
	cls, sep, unk, pad int
	vocabSize          int
	words              map[string]int32 // pieces that start a word
	conts              map[string]int32 // pieces that continue one, without "##"
	maxPieceBytes      int
	maxWordChars       int
	added              []addedToken
}

type addedToken struct {
	content string
	id      int
}

// encode returns the content token ids of text, without [CLS] and [SEP].
// Invalid UTF-8 reads as U+FFFD, which the normalizer drops.
func (t *tokenizer) encode(text string) []int {
	var s scratch
	ids := make([]int, 0, len(text)/3+1)
	for len(text) > 0 {
		at, tok := t.nextAdded(text)
		ids = t.encodePlain(&s, ids, text[:at])
		if tok == nil {
			break
		}
		ids = append(ids, tok.id)
		text = text[at+len(tok.content):]
	}
	return ids
}

// nextAdded returns where the first added token in text starts, and the
// longest one starting there; len(text) and nil when there is none.
func (t *tokenizer) nextAdded(text string) (int, *addedToken) {
	at, best := len(text), (*addedToken)(nil)
	for i := range t.added {
		a := &t.added[i]
		j := strings.Index(text[:min(len(text), at+len(a.content))], a.content)
		if j >= 0 && (j < at || j == at && len(a.content) > len(best.content)) {
			at, best = j, a
		}
	}
	return at, best
}

// scratch holds one encode call's buffers, reused across its segments.
type scratch struct {
	clean, nfd []byte
}

// encodePlain appends the ids of text, which holds no added token.
func (t *tokenizer) encodePlain(s *scratch, ids []int, text string) []int {
	s.clean = cleanText(s.clean[:0], text)
	b := s.clean
	if !isASCII(b) {
		s.nfd = norm.NFD.Append(s.nfd[:0], b...)
		b = s.nfd
	}
	word := make([]byte, 0, 64)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		i += n
		if r >= utf8.RuneSelf && unicode.Is(unicode.Mn, r) {
			continue
		}
		switch {
		case r == ' ':
			ids = t.wordPiece(ids, word)
			word = word[:0]
		case isPunct(r):
			ids = t.wordPiece(ids, word)
			ids = t.wordPiece(ids, utf8.AppendRune(word[:0], r))
			word = word[:0]
		default:
			word = utf8.AppendRune(word, lower(r))
		}
	}
	return t.wordPiece(ids, word)
}

// cleanText is BertNormalizer's clean_text and handle_chinese_chars: it
// drops NUL, U+FFFD (which invalid UTF-8 decodes to) and control
// characters, makes whitespace a space and puts spaces around CJK
// ideographs.
func cleanText(dst []byte, text string) []byte {
	for _, r := range text {
		switch {
		case r < utf8.RuneSelf && r >= ' ' && r != 0x7f:
			dst = append(dst, byte(r))
		case r == 0 || r == utf8.RuneError || isControl(r):
		case isWhitespace(r):
			dst = append(dst, ' ')
		case isCJK(r):
			dst = append(dst, ' ')
			dst = utf8.AppendRune(dst, r)
			dst = append(dst, ' ')
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isControl is tokenizers' is_control: the Other categories but unassigned
// (Cc, Cf, Co, Cs), less tab, newline and carriage return, which count as
// whitespace.
func isControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// isWhitespace is tokenizers' is_whitespace, Rust's char::is_whitespace
// (the White_Space property). Its control characters other than tab,
// newline and return were dropped before it is asked.
func isWhitespace(r rune) bool { return unicode.Is(unicode.White_Space, r) }

// isCJK is tokenizers' is_chinese_char: the CJK Unified Ideographs blocks
// as it lists them (Extension E's first block is not among them).
func isCJK(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF, r >= 0x20000 && r <= 0x2A6DF,
		r >= 0x2A700 && r <= 0x2B73F, r >= 0x2B740 && r <= 0x2B81F, r >= 0x2B920 && r <= 0x2CEAF,
		r >= 0xF900 && r <= 0xFAFF, r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// isPunct is BertPreTokenizer's is_bert_punc: ASCII punctuation (the four
// ranges of printable non-alphanumerics) or Unicode's P* categories.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126
	}
	return unicode.IsPunct(r)
}

// lower is Rust's char::to_lowercase for the characters that reach it:
// U+0130, the one whose lowercase is two characters, became I and a
// nonspacing mark under NFD before.
func lower(r rune) rune {
	if r < utf8.RuneSelf {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// wordPiece appends word's pieces: at each point the longest piece of the
// vocabulary that matches, "##" pieces after the first; the whole word is
// [UNK] when it is too long or some point has no piece.
func (t *tokenizer) wordPiece(ids []int, word []byte) []int {
	if len(word) == 0 {
		return ids
	}
	if len(word) > t.maxWordChars && utf8.RuneCount(word) > t.maxWordChars {
		return append(ids, t.unk)
	}
	n := len(ids)
	for start := 0; start < len(word); {
		pieces := t.words
		if start > 0 {
			pieces = t.conts
		}
		end := min(len(word), start+t.maxPieceBytes)
		for end > start && end < len(word) && !utf8.RuneStart(word[end]) {
			end--
		}
		id := int32(-1)
		for ; end > start; end = prevRuneStart(word, start, end) {
			if v, ok := pieces[string(word[start:end])]; ok {
				id = v
				break
			}
		}
		if id < 0 {
			return append(ids[:n], t.unk)
		}
		ids = append(ids, int(id))
		start = end
	}
	return ids
}

// prevRuneStart returns where the last character of word[start:end]
// starts.
func prevRuneStart(word []byte, start, end int) int {
	end--
	for end > start && !utf8.RuneStart(word[end]) {
		end--
	}
	return end
}
