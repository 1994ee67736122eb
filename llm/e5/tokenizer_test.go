package e5

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTinyTokenizer(t *testing.T) {
	tok := tinyTokenizer(t)
	tests := []struct {
		text string
		want []string
	}{
		{"", []string{"▁"}},
		{"ab", []string{"▁ab"}},
		{"  ab   c ", []string{"▁ab", "▁", "c", "▁"}}, // spaces collapsed, a leading space is the metaspace
		{"Åb", []string{"▁", "<unk>", "b"}},           // Å → A, which no piece covers
		{"ab\u3000c", []string{"▁ab", "▁", "c"}},      // U+3000 → space
		{"\ufb01", []string{"▁", "<unk>", "<unk>"}},   // ﬁ → f i
		{"the", []string{"▁the"}},
		{"th", []string{"▁", "<unk>", "<unk>"}},
		{"a\x00b", []string{"▁a"}}, // stops at NUL, as the C string does
		{"é\xc3", []string{"▁", "é", "<unk>"}},
	}
	for _, tt := range tests {
		var got []string
		for _, id := range tok.encode(tt.text) {
			got = append(got, tinyPieces[id])
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("encode(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestDecodeRuneLikeE5C(t *testing.T) {
	tests := []struct {
		in   string
		cp   rune
		size int
	}{
		{"a", 'a', 1}, {"é", 'é', 2}, {"€", '€', 3}, {"😀", '😀', 4},
		{"\xc3(", 0xc3&0x1f<<6 | '('&0x3f, 2}, // continuation not checked
		{"\xe2\x82", 0xe2, 1},                 // cut short: the lead byte's value
		{"\x80", 0x80, 1}, {"\xff", 0xff, 1},
	}
	for _, tt := range tests {
		if cp, n := decodeRune([]byte(tt.in)); cp != tt.cp || n != tt.size {
			t.Errorf("decodeRune(%q) = %U, %d; want %U, %d", tt.in, cp, n, tt.cp, tt.size)
		}
	}
}

// FuzzTokenize checks on any input that the ids are the vocabulary's and
// that, when no character was unknown, the pieces spell the normalized
// text with spaces as metaspaces, as SentencePiece's segmentation must.
func FuzzTokenize(f *testing.F) {
	tok := tinyTokenizer(f)
	for _, s := range []string{"", "ab c", "  the ab\u3000", "\xc3(\x00", "ﬁ Å é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.encode(s)
		var b strings.Builder
		known := true
		for _, id := range ids {
			if id < 0 || id >= len(tinyPieces) || id == tok.bos || id == tok.eos {
				t.Fatalf("encode(%q): id %d is not a content piece", s, id)
			}
			known = known && id != tok.unk
			b.WriteString(tinyPieces[id])
		}
		if !known || !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return
		}
		want := string(appendRune(nil, metaspace))
		norm := tok.normalize(s)
		if len(norm) > 0 && norm[0] == ' ' {
			want = ""
		}
		for _, r := range norm {
			if r == ' ' {
				r = metaspace
			}
			want += string(r)
		}
		if b.String() != want {
			t.Fatalf("encode(%q) spells %q, want %q", s, b.String(), want)
		}
	})
}
