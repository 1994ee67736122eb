package rag

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want *Verdict
	}{
		{"VERDICT: answered", &Verdict{Verdict: VerdictAnswered}},
		{"**Verdict:** Answered.", &Verdict{Verdict: VerdictAnswered}},
		{"verdict — not in the vault", &Verdict{Verdict: VerdictNotInVault}},
		{"VERDICT: Not in vault", &Verdict{Verdict: VerdictNotInVault}},
		{"# VERDICT: partly: how long it keeps in the fridge", &Verdict{Verdict: VerdictPartly, Missing: "how long it keeps in the fridge"}},
		{"VERDICT: partially — the price", &Verdict{Verdict: VerdictPartly, Missing: "the price"}},
		{"VERDICT: partly", &Verdict{Verdict: VerdictPartly}},
		{"VERDICT: maybe", nil},
		{"The verdict: answered", nil},
		{"Answered.", nil},
		{"", nil},
	} {
		got, ok := parseVerdict(tc.line)
		if ok != (tc.want != nil) || ok && *got != *tc.want {
			t.Errorf("parseVerdict(%q) = %+v, %v; want %+v", tc.line, got, ok, tc.want)
		}
	}
}

// The filter takes the verdict line (and the blank line after it) off a
// reply however the stream splits it, and passes a reply without one on
// whole.
func TestVerdictFilter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reply, want string
		verdict           *Verdict
	}{
		{"verdict first", "VERDICT: answered\n\nBake it at 250 °C [[Recipes/Sourdough bread]].", "Bake it at 250 °C [[Recipes/Sourdough bread]].", &Verdict{Verdict: VerdictAnswered}},
		{"partly", "Verdict: partly: the flour\nUse the starter.", "Use the starter.", &Verdict{Verdict: VerdictPartly, Missing: "the flour"}},
		{"leading blank lines", "\n\n  VERDICT: not in the vault\n\nThe vault is silent on this.", "The vault is silent on this.", &Verdict{Verdict: VerdictNotInVault}},
		{"ignored", "Bake it at 250 °C.\nVERDICT: answered", "Bake it at 250 °C.\nVERDICT: answered", nil},
		{"a word that starts like it", "Verdicts differ: the notes disagree.", "Verdicts differ: the notes disagree.", nil},
		{"a verdict line with nothing after it", "VERDICT: answered", "", &Verdict{Verdict: VerdictAnswered}},
		{"no newline within the bound", "verdict" + strings.Repeat(" x", maxVerdictBytes), "verdict" + strings.Repeat(" x", maxVerdictBytes), nil},
	} {
		for _, size := range []int{1, 3, 7, 1 << 20} {
			var out strings.Builder
			var got *Verdict
			f := &verdictFilter{next: func(s string) error { out.WriteString(s); return nil }, decide: func(v *Verdict) error { got = v; return nil }}
			for piece := range chunkString(tc.reply, size) {
				if err := f.Write(piece); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want || (got == nil) != (tc.verdict == nil) || got != nil && *got != *tc.verdict {
				t.Errorf("%s, pieces of %d: passed %q, verdict %+v; want %q, %+v", tc.name, size, out.String(), got, tc.want, tc.verdict)
			}
		}
	}
}

// A decision to stop ends the stream at the verdict: nothing after it
// passes.
func TestVerdictFilterStops(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	f := &verdictFilter{next: func(s string) error { out.WriteString(s); return nil }, decide: func(*Verdict) error { return errVerdictStop }}
	err := f.Write("VERDICT: not in the vault\n\nsomething")
	if !errors.Is(err, errVerdictStop) || out.Len() != 0 {
		t.Fatalf("err %v, passed %q", err, out.String())
	}
}

// chunkString yields s in pieces of size bytes, never splitting a rune.
func chunkString(s string, size int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for s != "" {
			n := min(size, len(s))
			for n < len(s) && !utf8.RuneStart(s[n]) {
				n++
			}
			if !yield(s[:n]) {
				return
			}
			s = s[n:]
		}
	}
}

// FuzzVerdictFilter: whatever the reply and however it is split, the
// filter passes on either the whole reply or what follows a verdict line,
// and never panics.
func FuzzVerdictFilter(f *testing.F) {
	for _, s := range []string{"VERDICT: answered\n\nx", "Verdict: partly: y\nz", "plain answer", "verdict", "\n\n**VERDICT**: not in the vault\n"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, reply string, size int) {
		if size < 1 {
			size = 1
		}
		var out strings.Builder
		var got *Verdict
		vf := &verdictFilter{next: func(s string) error { out.WriteString(s); return nil }, decide: func(v *Verdict) error { got = v; return nil }}
		for piece := range chunkString(reply, size) {
			if err := vf.Write(piece); err != nil {
				t.Fatal(err)
			}
		}
		if err := vf.Close(); err != nil {
			t.Fatal(err)
		}
		if got == nil && out.String() != reply {
			t.Fatalf("no verdict, but passed %q of %q", out.String(), reply)
		}
		if got != nil && !strings.HasSuffix(reply, out.String()) {
			t.Fatalf("verdict %+v, passed %q: not the end of %q", got, out.String(), reply)
		}
	})
}

// Without the verdict (Options.NoVerdict) the contract is the same but for
// its verdict rule: nothing in it asks for a verdict line.
func TestNoVerdictPromptDropsOnlyTheRule(t *testing.T) {
	t.Parallel()
	if strings.Contains(noVerdictPrompt, "VERDICT") || len(systemPrompt)-len(noVerdictPrompt) != len(verdictRule)+2 {
		t.Fatalf("the contract without its verdict rule:\n%s", noVerdictPrompt)
	}
	msgs := answerMessages(Question{Text: "q"}, "q", nil, nil, false)
	if msgs[0].Content != noVerdictPrompt {
		t.Errorf("answerMessages without the verdict sends:\n%s", msgs[0].Content)
	}
}
