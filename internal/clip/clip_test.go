package clip

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vaultask/vaultask/tstest/deptest"
)

func TestDeps(t *testing.T) { deptest.Check(t) }

func TestText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, s string
		max     int
		breaks  string
		want    string
	}{
		{"short", "short", 10, " ", "short"},
		{"exactly max", "abcde", 5, " ", "abcde"},
		{"at a word", "one two three four five", 12, " ", "one two…"},
		{"runes, not bytes", "ääääääääää", 4, " ", "äää…"},
		{"no breaks: a hard cut", "one two three four five", 12, "", "one two thr…"},
		{"a break in the first half is not taken", "a bcdefghijkl", 8, " ", "a bcdef…"},
		{"a newline break", "first line\nsecond line", 16, " \n", "first line…"},
		{"max 1 is the mark", "abc", 1, " ", "…"},
		{"max 0 is nothing", "abc", 0, " ", ""},
		{"negative max is nothing", "abc", -3, " ", ""},
		{"empty", "", 0, " ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(tc.s, tc.max, tc.breaks); got != tc.want {
				t.Errorf("Text(%q, %d, %q) = %q, want %q", tc.s, tc.max, tc.breaks, got, tc.want)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s     string
		n     int
		want  string
		whole bool
	}{
		{"äbc", 1, "ä", false},
		{"äbc", 3, "äbc", true},
		{"äbc", 9, "äbc", true},
		{"äbc", 0, "", false},
		{"", 0, "", true},
		{"a\xffb", 2, "a\xff", false}, // an invalid byte counts as one rune, as utf8.RuneCountInString counts it
	} {
		got, whole := Prefix(tc.s, tc.n)
		if got != tc.want || whole != tc.whole {
			t.Errorf("Prefix(%q, %d) = %q, %v; want %q, %v", tc.s, tc.n, got, whole, tc.want, tc.whole)
		}
	}
}

// Clipped text is a prefix of the text followed by the mark, never longer
// than max runes, and the text itself when it fits.
func FuzzText(f *testing.F) {
	f.Add("one two three four five", 12, " ")
	f.Add("ääääääääää", 4, "")
	f.Add("line one\nline two", 9, " \n")
	f.Add("a\xffb\xfe", 2, "\xff")
	f.Fuzz(func(t *testing.T, s string, max int, breaks string) {
		got := Text(s, max, breaks)
		if max < 1 {
			if got != "" {
				t.Fatalf("Text(%q, %d) = %q, want nothing", s, max, got)
			}
			return
		}
		if utf8.RuneCountInString(s) <= max {
			if got != s {
				t.Fatalf("Text(%q, %d) = %q, want the text unchanged", s, max, got)
			}
			return
		}
		body, marked := strings.CutSuffix(got, Mark)
		if !marked || !strings.HasPrefix(s, body) {
			t.Fatalf("Text(%q, %d) = %q: not a prefix and the mark", s, max, got)
		}
		if n := utf8.RuneCountInString(body) + 1; n > max {
			t.Fatalf("Text(%q, %d) = %q: %d runes", s, max, got, n)
		}
	})
}
