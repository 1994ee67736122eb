package markdown

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkMarkdown fails t when n, an ordinary note, was read as plain text.
func checkMarkdown(t *testing.T, n Note) {
	t.Helper()
	if n.PlainText != "" {
		t.Errorf("an ordinary note was read as plain text: %s", n.PlainText)
	}
}

func TestParseHostile(t *testing.T) {
	t.Parallel()
	for _, in := range hostileInputs {
		t.Run(in.name, func(t *testing.T) {
			n := Parse("n.md", []byte(in.gen(1_000_000)), "sensitivity")
			switch {
			case in.markdown && n.PlainText != "":
				t.Errorf("read as plain text: %s", n.PlainText)
			case !in.markdown && !strings.HasSuffix(n.PlainText, ": indexed as plain text"):
				t.Errorf("PlainText = %q, want a reason ending \": indexed as plain text\"", n.PlainText)
			}
			opts := DefaultChunkOptions()
			checkChunks(t, n.Body, opts, checkNoteChunks(t, n, opts))
		})
	}
}

func TestParseOrdinaryNotes(t *testing.T) {
	t.Parallel()
	srcs := []string{string(syntheticNote())}
	srcs = append(srcs, ordinaryNotes...)
	corpus, err := filepath.Glob("testdata/fuzz/*/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range corpus {
		srcs = append(srcs, fuzzCorpusStrings(t, path)...)
	}
	for _, src := range srcs {
		checkMarkdown(t, Parse("n.md", []byte(src), "sensitivity"))
	}
}

// fuzzCorpusStrings returns the []byte and string values of a file in Go's
// fuzz corpus format.
func fuzzCorpusStrings(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		for _, prefix := range []string{"[]byte(", "string("} {
			if quoted, ok := strings.CutPrefix(line, prefix); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				out = append(out, s)
			}
		}
	}
	return out
}

func TestParsePlainTextReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"nesting, line counted in the note", "---\ntitle: T\n---\ntext\n\n" + strings.Repeat(">", 100) + " deep\n",
			"line 6 nests 100 block levels (limit 32): indexed as plain text"},
		{"mixed nesting", "a\n" + strings.Repeat("> - ", 33) + "x\n", "line 2 nests 66 block levels (limit 32): indexed as plain text"},
		{"nesting by indentation", listStaircase(40), "line 33 nests 33 block levels (limit 32): indexed as plain text"},
		{"emphasis", "intro\n\n" + strings.Repeat("*a_ ", 50_000), "emphasis markers (* and _) that may not pair up, most in the paragraph at line 3, "},
		{"link destinations", strings.Repeat("[a](b", 50_000), "link destinations with no end, most in the paragraph at line 1, "},
		{"nested brackets", strings.Repeat("[", 50_000) + strings.Repeat("]", 50_000), "brackets around much other markup, most in the paragraph at line 1, "},
		{"markup", strings.Repeat("- a\n", 250_000), "markup (lines, quote and list markers, brackets, emphasis and code marks), most in the paragraph at line 1, "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse("n.md", []byte(tt.src), "").PlainText
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("PlainText = %q, want it to begin %q", got, tt.want)
			}
		})
	}
}

// listStaircase is a list of n items, each nested one level deeper.
func listStaircase(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat("  ", i) + "- a\n")
	}
	return b.String()
}

func TestParseWithinBounds(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"nesting at the limit":          strings.Repeat(">", 32) + " deep",
		"listed by indentation":         listStaircase(32),
		"thematic breaks are not lists": strings.Repeat("- ", 1000) + "\n\n" + strings.Repeat("* ", 1000),
		"indented text nests no deeper": "- a\n" + strings.Repeat(" ", 200) + "text\n",
		"escaped brackets":              strings.Repeat(`\[`, 1000) + strings.Repeat(`\]`, 1000),
		"a long line of prose":          strings.Repeat("word ", 200_000),
		"paragraphs with emphasis":      strings.Repeat("Some *emphasis*, _more_ and **strong** words.\n\n", 10_000),
		"paragraphs with links":         strings.Repeat(strings.Repeat("See [[Note]] and [text](Other.md).\n", 10)+"\n", 1000),
		"a table of 2000 rows":          "| a | b | c |\n|---|---|---|\n" + strings.Repeat("| **name** | [[Link]] | `code` |\n", 2000),
	} {
		t.Run(name, func(t *testing.T) {
			checkMarkdown(t, Parse("n.md", []byte(src), ""))
		})
	}
}

func TestParsePlainText(t *testing.T) {
	t.Parallel()
	src := strings.Repeat(">", 100) + "\n\n# Heading\n\nSee [[Link]], [md](Other.md) and `[[Code]]` #tag.\n\n```\n#fenced\n```\n"
	n := Parse("n.md", []byte(src), "")
	if n.PlainText == "" {
		t.Fatal("not read as plain text")
	}
	w := func(target string) Link { return Link{Target: target, Kind: KindWikilink} }
	if diff := cmp.Diff([]Link{w("Link"), w("Code")}, n.Links, ignoreContext); diff != "" {
		t.Errorf("Links (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tag", "fenced"}, n.Tags); diff != "" {
		t.Errorf("Tags (-want +got):\n%s", diff)
	}
	want := []chunkWant{
		{"", strings.Repeat(">", 100)},
		{"", "# Heading"},
		{"", "See [[Link]], [md](Other.md) and `[[Code]]` #tag."},
		{"", "```\n#fenced\n```"},
	}
	got := checkNoteChunks(t, n, noMergeSmall)
	if diff := cmp.Diff(want, chunkWants(got), cmp.AllowUnexported(chunkWant{})); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	checkChunks(t, n.Body, noMergeSmall, got)
}

// noMergeSmall cuts at every paragraph of plain text and joins none.
var noMergeSmall = ChunkOptions{TargetTokens: 1, MinTokens: 1, MaxTokens: 40}
