package bge

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// tokenizerFile is the model's tokenizer.json where
// `vaultask fetch-model` puts it: under VAULTASK_MODELS__BUILTIN_DIR, else the
// default directory of the built-in models.
func tokenizerFile() string { return filepath.Join(modelDir(), tokenizerName) }

var loadTokenizer = sync.OnceValues(func() (*tokenizer, error) {
	b, err := os.ReadFile(tokenizerFile())
	if err != nil {
		return nil, err
	}
	return newTokenizer(b)
})

// mustTokenizer returns the real model's tokenizer, skipping without its
// file unless VAULTASK_REQUIRE_MODELS=1.
func mustTokenizer(tb testing.TB) *tokenizer {
	tb.Helper()
	t, err := loadTokenizer()
	if errors.Is(err, os.ErrNotExist) && os.Getenv("VAULTASK_REQUIRE_MODELS") != "1" {
		tb.Skipf("%v; vaultask fetch-model bge fetches it", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// tinyVocab is the vocabulary of tinyJSON, its ids in order.
var tinyVocab = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
	"un", "##aff", "##able", "aff", "a", "##a", "e", "!", ".", "?", "日", "本", "x", "##x", "##xx", "héllo", "hello",
	"cafe", "ﬁ", "fi", "σ", "##σ", "ǆ", "ß", "##ß"}

// tinyJSON is a tokenizer.json like the model's with tinyVocab, edited by
// each of edits (old, new pairs) in turn.
func tinyJSON(tb testing.TB, edits ...string) []byte {
	tb.Helper()
	var v strings.Builder
	for i, p := range tinyVocab {
		if i > 0 {
			v.WriteString(",")
		}
		v.WriteString(`"` + p + `":` + strconvItoa(i))
	}
	s := `{"version":"1.0","truncation":null,"padding":null,
"added_tokens":[{"id":0,"content":"[PAD]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
 {"id":1,"content":"[UNK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
 {"id":2,"content":"[CLS]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
 {"id":3,"content":"[SEP]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
 {"id":4,"content":"[MASK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],
"normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},
"pre_tokenizer":{"type":"BertPreTokenizer"},
"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],
 "pair":[],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},"[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]}}},
"decoder":{"type":"WordPiece","prefix":"##","cleanup":true},
"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":10,"vocab":{` + v.String() + `}}}`
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			tb.Fatalf("tinyJSON: no %q to edit", edits[i])
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return []byte(s)
}

func strconvItoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return strconvItoa(i/10) + string(rune('0'+i%10))
}

func mustTiny(tb testing.TB) *tokenizer {
	tb.Helper()
	t, err := newTokenizer(tinyJSON(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func pieces(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tinyVocab[id]
	}
	return out
}

func TestTinyTokenizer(t *testing.T) {
	tok := mustTiny(t)
	if tok.cls != 2 || tok.sep != 3 || tok.unk != 1 || tok.pad != 0 {
		t.Fatalf("cls, sep, unk, pad = %d, %d, %d, %d; want 2, 3, 1, 0", tok.cls, tok.sep, tok.unk, tok.pad)
	}
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"   \t\n", nil},
		{"!.?", []string{"!", ".", "?"}}, // each punctuation character a word
		{"unaffable", []string{"un", "##aff", "##able"}}, // longest first, ## after
		{"UnAffable!", []string{"un", "##aff", "##able", "!"}},
		{"affq", []string{"[UNK]"}},                                          // "aff" fits, but no piece for "q": the whole word
		{"unq a", []string{"[UNK]", "a"}},                                    // no piece for "q": the whole word, only it
		{"xxxxxxxxxx", []string{"x", "##xx", "##xx", "##xx", "##xx", "##x"}}, // 10 characters: the limit
		{"xxxxxxxxxxx", []string{"[UNK]"}},                                   // 11: past max_input_chars_per_word
		{"ééééééééééé", []string{"[UNK]"}},                                   // counted in characters, not bytes
		{"Héllo HELLO", []string{"hello", "hello"}},                          // accents stripped (héllo is never reached)
		{"cafe\u0301", []string{"cafe"}},                                     // a combining mark dropped
		{"日本x", []string{"日", "本", "x"}},                                     // ideographs split off
		{"a\x00e\ufffd\u200ba", []string{"[UNK]"}},                           // NUL, U+FFFD, ZWSP dropped: "aea"
		{"a\u00a0e\u3000a", []string{"a", "e", "a"}},                         // no-break and ideographic spaces split
		{"a\xffe", []string{"[UNK]"}},                                        // invalid UTF-8 is U+FFFD, dropped: "ae"
		{"ﬁ", []string{"ﬁ"}},                                                 // no compatibility folding (NFD only)
		{"ΣΣ", []string{"σ", "##σ"}},                                         // no final sigma
		{"Ǆ", []string{"ǆ"}},
		{"ẞ", []string{"ß"}},
		{"[CLS]a[MASK] [cls]", []string{"[CLS]", "a", "[MASK]", "[UNK]", "[UNK]", "[UNK]"}}, // added tokens match raw, case and all
		{"[[SEP]]", []string{"[UNK]", "[SEP]", "[UNK]"}},                                    // "[" and "]" have no piece here
	}
	for _, tt := range tests {
		if got := pieces(tok.encode(tt.text)); !slices.Equal(got, tt.want) {
			t.Errorf("encode(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// The real tokenizer.json: its special ids, and a 101-character word.
func TestModelTokenizer(t *testing.T) {
	tok := mustTokenizer(t)
	if tok.cls != 101 || tok.sep != 102 || tok.unk != 100 || tok.pad != 0 || tok.vocabSize != 30522 {
		t.Fatalf("cls, sep, unk, pad, vocab = %d, %d, %d, %d, %d; want 101, 102, 100, 0, 30522",
			tok.cls, tok.sep, tok.unk, tok.pad, tok.vocabSize)
	}
	if got := tok.encode(strings.Repeat("a", 101)); !slices.Equal(got, []int{tok.unk}) {
		t.Errorf("a 101-character word: %v, want [UNK] alone", got)
	}
	if got := tok.encode(strings.Repeat("a", 100)); len(got) < 2 || slices.Contains(got, tok.unk) {
		t.Errorf("a 100-character word: %v, want pieces", got)
	}
}

// A tokenizer.json that asks for anything the tokenizer does not run is
// refused with an error naming the setting.
func TestTokenizerJSONRefused(t *testing.T) {
	tests := []struct {
		old, new, want string
	}{
		{`"type":"BertNormalizer"`, `"type":"NFKC"`, `normalizer is "NFKC", want BertNormalizer`},
		{`"lowercase":true`, `"lowercase":false`, "lowercase is off"},
		{`"strip_accents":null`, `"strip_accents":false`, "strip_accents is false"},
		{`"clean_text":true`, `"clean_text":false`, "clean_text is off"},
		{`"handle_chinese_chars":true`, `"handle_chinese_chars":false`, "handle_chinese_chars is off"},
		{`"lowercase":true`, `"lowercase":true,"nfkc":true`, `unknown field "nfkc"`},
		{`{"type":"BertPreTokenizer"}`, `{"type":"Whitespace"}`, `pre_tokenizer is "Whitespace"`},
		{`"type":"WordPiece","unk_token"`, `"type":"BPE","unk_token"`, `model is "BPE", want WordPiece`},
		{`"continuing_subword_prefix":"##"`, `"continuing_subword_prefix":"@@"`, `continuing_subword_prefix is "@@"`},
		{`"max_input_chars_per_word":10`, `"max_input_chars_per_word":0`, "max_input_chars_per_word is 0"},
		{`"unk_token":"[UNK]"`, `"unk_token":"<unk>"`, `unk_token "<unk>" is not in the vocab`},
		{`"version":"1.0"`, `"version":"2.0"`, `format version "2.0"`},
		{`"lstrip":false`, `"lstrip":true`, `added token "[PAD]": single_word, lstrip`},
		{`"[SEP]":{"id":"[SEP]","ids":[3]`, `"[SEP]":{"id":"[SEP]","ids":[3,4]`, `"[SEP]" has 2 ids`},
		{`{"Sequence":{"id":"A","type_id":0}},`, ``, "single template"},
		{`"normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}`, `"normalizer":null`, "normalizer: missing"},
	}
	if _, err := newTokenizer(tinyJSON(t)); err != nil {
		t.Fatalf("the unedited file: %v", err)
	}
	for _, tt := range tests {
		_, err := newTokenizer(tinyJSON(t, tt.old, tt.new))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "tokenizer.json: ") {
			t.Errorf("with %s: error %v, want one naming %q", tt.new, err, tt.want)
		}
	}
	if _, err := newTokenizer(tinyJSON(t, `"strip_accents":null`, `"strip_accents":true`)); err != nil {
		t.Errorf("strip_accents true (the same as null with lowercase): %v", err)
	}
}

// FuzzTokenizer checks on any text that encode does not panic, gives ids
// of the vocabulary that are never [CLS], [SEP] or [PAD] unless the text
// spells them, gives the same ids twice, and that a text's ids are those of
// its words joined when it is split at a space.
func FuzzTokenizer(f *testing.F) {
	tok := mustTiny(f)
	for _, s := range []string{"", "unaffable!", "日本 x", "[CLS]a[MASK]", "héllo\x00\ufffd", "xxxxxxxxxxx ééé", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.encode(s)
		for _, id := range ids {
			if id < 0 || id >= tok.vocabSize {
				t.Fatalf("encode(%q): id %d outside the vocab", s, id)
			}
			if (id == tok.cls || id == tok.sep || id == tok.pad) && !strings.Contains(s, tinyVocab[id]) {
				t.Fatalf("encode(%q): %s without it in the text", s, tinyVocab[id])
			}
		}
		if again := tok.encode(s); !slices.Equal(ids, again) {
			t.Fatalf("encode(%q) gave %v, then %v", s, ids, again)
		}
		if a, b, ok := strings.Cut(s, " "); ok {
			if joined := append(tok.encode(a), tok.encode(b)...); !slices.Equal(ids, joined) {
				t.Fatalf("encode(%q) = %v, but its halves at a space give %v", s, ids, joined)
			}
		}
	})
}
