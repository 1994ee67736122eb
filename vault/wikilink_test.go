package vault

import (
	"reflect"
	"strings"
	"testing"
)

func TestWikilinks(t *testing.T) {
	t.Parallel()
	type w = Wikilink
	for _, tc := range []struct {
		name string
		src  string
		code string // the code bytes of src marked with 'c', or "" for none
		want []Wikilink
	}{
		{"plain", "see [[Note]] now", "", []w{{Start: 4, End: 12, Inner: "Note"}}},
		{"embed", "![[a.png|20]]", "", []w{{Start: 0, End: 13, Inner: "a.png|20", Embed: true}}},
		{"two on a line", "[[a]] and [[b#h]]", "", []w{{Start: 0, End: 5, Inner: "a"}, {Start: 10, End: 17, Inner: "b#h"}}},
		{"nested openers: the innermost wins", "[[a [[b]]", "", []w{{Start: 4, End: 9, Inner: "b"}}},
		{"unclosed on its line", "[[a\nb]] [[c]]", "", []w{{Start: 8, End: 13, Inner: "c"}}},
		{"names nothing: the caller decides", "[[]] [[|x]]", "", []w{{Start: 0, End: 4, Inner: ""}, {Start: 5, End: 11, Inner: "|x"}}},
		{"escaped table pipe stays inside", `| [[a\|b]] |`, "", []w{{Start: 2, End: 10, Inner: `a\|b`}}},
		{"in code", "`[[no]]` [[yes]]", "cccccccc", []w{{Start: 9, End: 16, Inner: "yes"}}},
		{"touching code", "[[a`b]]`", "   ccccc", nil},
		{"an embed's '!' in code is a link", "`!`[[a]]", "ccc", []w{{Start: 3, End: 8, Inner: "a"}}},
		{"single brackets", "[[a]b]] [x]", "", []w{{Start: 0, End: 7, Inner: "a]b"}}},
		{"non-ASCII", "ö [[Å/ä]]", "", []w{{Start: 3, End: 12, Inner: "Å/ä"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code []bool
			if tc.code != "" {
				code = make([]bool, len(tc.src))
				for i := range tc.code {
					code[i] = tc.code[i] == 'c'
				}
			}
			if got := Wikilinks([]byte(tc.src), code); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Wikilinks(%q) = %+v, want %+v", tc.src, got, tc.want)
			}
		})
	}
}

// Every wikilink found is its text's own bytes, on one line, in order,
// outside code, with no link inside it.
func FuzzWikilinks(f *testing.F) {
	for _, s := range []string{"see [[Note]] now", "![[a.png]] [[a [[b]]", "[[a\nb]]", "`[[no]]` [[yes]]", "[[a]b]]", "![[", "[[]]]]"} {
		f.Add([]byte(s), uint64(0))
		f.Add([]byte(s), uint64(0b1111_0000))
	}
	f.Fuzz(func(t *testing.T, src []byte, codeBits uint64) {
		var code []bool
		if codeBits != 0 {
			code = make([]bool, len(src))
			for i := range code {
				code[i] = codeBits>>(i%64)&1 == 1
			}
		}
		last := 0
		for _, l := range Wikilinks(src, code) {
			if l.Start < last || l.End > len(src) {
				t.Fatalf("%+v out of order or out of %q", l, src)
			}
			last = l.End
			want := "[[" + l.Inner + "]]"
			if l.Embed {
				want = "!" + want
			}
			if got := string(src[l.Start:l.End]); got != want {
				t.Fatalf("%+v spans %q", l, got)
			}
			if strings.Contains(l.Inner, "\n") || strings.Contains(l.Inner, "[[") || strings.Contains(l.Inner, "]]") {
				t.Fatalf("%+v holds a line break or a link", l)
			}
			for i := l.Start; code != nil && i < l.End; i++ {
				if code[i] {
					t.Fatalf("%+v touches code at %d", l, i)
				}
			}
		}
	})
}
