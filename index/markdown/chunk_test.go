package markdown

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// small sizes chunks in tests: 4 bytes a token, so 160 bytes at most.
var small = ChunkOptions{TargetTokens: 20, MinTokens: 5, MaxTokens: 40}

// noMerge keeps every non-blank section its own chunk.
var noMerge = ChunkOptions{TargetTokens: 1000, MinTokens: 1, MaxTokens: 2000}

type chunkWant struct {
	path string
	body string
}

func chunkWants(chunks []Chunk) []chunkWant {
	var out []chunkWant
	for _, c := range chunks {
		out = append(out, chunkWant{c.HeadingPath, c.Body})
	}
	return out
}

// sentence returns a sentence of exactly n bytes (n ≥ 2) ending in ". ".
func sentence(n int) string {
	return strings.Repeat("w", n-2) + ". "
}

func TestChunkBodySections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		opts ChunkOptions
		want []chunkWant
	}{
		{"empty", "", noMerge, nil},
		{"blank", " \n\n\t\n", noMerge, nil},
		{"no headings", "just text\n\nmore text\n", noMerge, []chunkWant{{"", "just text\n\nmore text"}}},
		{
			name: "heading path",
			body: "preamble\n# Title\nt\n## Setup\ns\n### Install\ni\n#### Detail\nd\n### Configure\nc\n## Use\nu\n# Other\no\n",
			opts: noMerge,
			want: []chunkWant{
				{"", "preamble"},
				{"Title", "# Title\nt"},
				{"Title > Setup", "## Setup\ns"},
				{"Title > Setup > Install", "### Install\ni\n#### Detail\nd"},
				{"Title > Setup > Configure", "### Configure\nc"},
				{"Title > Use", "## Use\nu"},
				{"Other", "# Other\no"},
			},
		},
		{
			name: "skipped levels and heading markup",
			body: "### Deep *first*\na\n## `Code` and [link](x)\nb\n",
			opts: noMerge,
			want: []chunkWant{{"Deep first", "### Deep *first*\na"}, {"Code and link", "## `Code` and [link](x)\nb"}},
		},
		{
			name: "setext headings",
			body: "Top\n===\na\n\nSub\n---\nb\n",
			opts: noMerge,
			want: []chunkWant{{"Top", "Top\n===\na"}, {"Top > Sub", "Sub\n---\nb"}},
		},
		{
			name: "headings in code, quotes and lists do not split",
			body: "## Real\n```\n## fenced\n```\n> ## quoted\n- ## listed\n\n    ## indented\n",
			opts: noMerge,
			want: []chunkWant{{"Real", "## Real\n```\n## fenced\n```\n> ## quoted\n- ## listed\n\n    ## indented"}},
		},
		{
			name: "whitespace-only preamble vanishes",
			body: "\n  \n\n## A\na\n",
			opts: noMerge,
			want: []chunkWant{{"A", "## A\na"}},
		},
		{
			name: "leading indentation of a chunk is kept",
			body: "    code line\n\n## A\na\n",
			opts: noMerge,
			want: []chunkWant{{"", "    code line"}, {"A", "## A\na"}},
		},
		{
			name: "runt merges into the previous chunk",
			body: "## Big\n" + strings.Repeat("b", 40) + "\n## Tiny\nt\n## Big2\n" + strings.Repeat("c", 40) + "\n",
			opts: small,
			want: []chunkWant{
				{"Big", "## Big\n" + strings.Repeat("b", 40) + "\n## Tiny\nt"},
				{"Big2", "## Big2\n" + strings.Repeat("c", 40)},
			},
		},
		{
			name: "consecutive runts all join the previous chunk",
			body: "## Big\n" + strings.Repeat("b", 40) + "\n## T1\nx\n## T2\ny\n",
			opts: small,
			want: []chunkWant{{"Big", "## Big\n" + strings.Repeat("b", 40) + "\n## T1\nx\n## T2\ny"}},
		},
		{
			name: "first runt merges into the next",
			body: "hi\n## Big\n" + strings.Repeat("b", 40) + "\n",
			opts: small,
			want: []chunkWant{{"", "hi\n## Big\n" + strings.Repeat("b", 40)}},
		},
		{
			name: "a single small note is one chunk",
			body: "# T\nx\n",
			opts: small,
			want: []chunkWant{{"T", "# T\nx"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tt.body), "")
			checkMarkdown(t, n)
			got := checkNoteChunks(t, n, tt.opts)
			if diff := cmp.Diff(tt.want, chunkWants(got), cmp.AllowUnexported(chunkWant{})); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			checkChunks(t, tt.body, tt.opts, got)
		})
	}
}

func TestChunkBodyHardSplit(t *testing.T) {
	t.Parallel()
	para := func(c string) string { return strings.Repeat(c, 70) }
	q35 := strings.Repeat("q", 35)
	tests := []struct {
		name string
		body string
		want []chunkWant
	}{
		{
			// Each paragraph is 70 bytes (18 tokens): two would pass the
			// target of 20, so each is a chunk; the heading stays with the first.
			name: "paragraph boundaries",
			body: "## S\n" + para("a") + "\n\n" + para("b") + "\n\n" + para("c") + "\n",
			want: []chunkWant{{"S", "## S\n" + para("a")}, {"S", para("b")}, {"S", para("c")}},
		},
		{
			name: "list items are block boundaries",
			body: "- " + para("a") + "\n- " + para("b") + "\n- " + para("c") + "\n",
			want: []chunkWant{{"", "- " + para("a")}, {"", "- " + para("b")}, {"", "- " + para("c")}},
		},
		{
			// One 200-byte paragraph of 40-byte sentences, packed two by
			// two: 80 bytes is the 20-token target.
			name: "sentence boundaries",
			body: strings.Repeat(sentence(40), 5),
			want: []chunkWant{
				{"", sentence(40) + sentence(40)[:39]},
				{"", sentence(40) + sentence(40)[:39]},
				{"", sentence(40)[:39]},
			},
		},
		{
			// The last word alone (3 tokens) is under MinTokens: it joins
			// the piece before it.
			name: "a small tail joins the piece before",
			body: strings.Repeat(sentence(40), 4) + "end.",
			want: []chunkWant{
				{"", sentence(40) + sentence(40)[:39]},
				{"", sentence(40) + sentence(40) + "end."},
			},
		},
		{
			name: "a code block is never cut while a paragraph boundary exists",
			body: "intro " + para("i") + "\n\n```\n" + strings.Repeat("x", 30) + "\n\n" + strings.Repeat("y", 30) + "\n\n" + strings.Repeat("z", 30) + "\n```\n\n" + para("o") + "\n",
			want: []chunkWant{
				{"", "intro " + para("i")},
				{"", "```\n" + strings.Repeat("x", 30) + "\n\n" + strings.Repeat("y", 30) + "\n\n" + strings.Repeat("z", 30) + "\n```"},
				{"", para("o")},
			},
		},
		{
			// 36-byte lines: two (and the fence) fit the 80-byte target.
			name: "an oversized code block is cut at lines",
			body: "```\n" + strings.Repeat(q35+"\n", 6) + "```\n",
			want: []chunkWant{
				{"", "```\n" + q35 + "\n" + q35},
				{"", q35 + "\n" + q35},
				{"", q35 + "\n" + q35 + "\n```"},
			},
		},
		{
			name: "words when there are no sentences",
			body: strings.Repeat("word ", 50),
			want: []chunkWant{
				{"", strings.TrimSpace(strings.Repeat("word ", 16))},
				{"", strings.TrimSpace(strings.Repeat("word ", 16))},
				{"", strings.TrimSpace(strings.Repeat("word ", 18))},
			},
		},
		{
			name: "characters as a last resort",
			body: strings.Repeat("é", 100),
			want: []chunkWant{{"", strings.Repeat("é", 40)}, {"", strings.Repeat("é", 40)}, {"", strings.Repeat("é", 20)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tt.body), "")
			checkMarkdown(t, n)
			got := checkNoteChunks(t, n, small)
			if diff := cmp.Diff(tt.want, chunkWants(got), cmp.AllowUnexported(chunkWant{})); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			checkChunks(t, tt.body, small, got)
		})
	}
}

func TestChunkBodyDefaults(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("## H\n"+strings.Repeat("Some words here. ", 150)+"\n\n", 6)
	got := ChunkBody(body, ChunkOptions{})
	if diff := cmp.Diff(ChunkBody(body, DefaultChunkOptions()), got); diff != "" {
		t.Errorf("zero options differ from DefaultChunkOptions (-want +got):\n%s", diff)
	}
	checkChunks(t, body, DefaultChunkOptions(), got)
	if len(got) != 6 {
		t.Errorf("got %d chunks for six 640-token sections, want 6", len(got))
	}
}

func TestChunkBodyOptionsCapped(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("alpha beta gamma. ", 40)
	opts := ChunkOptions{TargetTokens: 500, MinTokens: 400, MaxTokens: 30}
	checkChunks(t, body, ChunkOptions{TargetTokens: 30, MinTokens: 30, MaxTokens: 30}, ChunkBody(body, opts))
}

func TestChunkBodyDeterministic(t *testing.T) {
	t.Parallel()
	body := "pre\n# A\n" + strings.Repeat("x y z. ", 400) + "\n## B\nb\n### C\n" + strings.Repeat("c ", 900)
	first := ChunkBody(body, DefaultChunkOptions())
	for range 3 {
		if diff := cmp.Diff(first, ChunkBody(body, DefaultChunkOptions())); diff != "" {
			t.Fatalf("second run differs (-first +again):\n%s", diff)
		}
	}
	ids := map[string]bool{}
	for _, c := range first {
		id := ChunkID("notes/a.md", c.HeadingPath, c.Ordinal)
		if ids[id] {
			t.Errorf("duplicate chunk id %s", id)
		}
		ids[id] = true
	}
}

func TestNoteChunks(t *testing.T) {
	t.Parallel()
	srcs := [][]byte{syntheticNote()}
	for _, s := range fuzzSeeds {
		srcs = append(srcs, []byte(s))
	}
	for _, src := range srcs {
		n := Parse("n.md", src, "sensitivity")
		for _, opts := range []ChunkOptions{small, DefaultChunkOptions()} {
			checkNoteChunks(t, n, opts)
		}
	}

	n := Parse("n.md", []byte("# Old\nold text\n"), "")
	n.Body = "# New\nnew text\n"
	if diff := cmp.Diff(ChunkBody(n.Body, small), n.Chunks(small)); diff != "" {
		t.Errorf("Chunks after Body changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ChunkBody("# A\na\n", small), Note{Body: "# A\na\n"}.Chunks(small)); diff != "" {
		t.Errorf("Chunks of a Note not from Parse (-want +got):\n%s", diff)
	}
}

func TestChunkID(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("notes/a.md\x00Setup > Install\x003"))
	if got, want := ChunkID("notes/a.md", "Setup > Install", 3), hex.EncodeToString(sum[:])[:16]; got != want {
		t.Errorf("ChunkID = %s, want %s", got, want)
	}
	if got := ChunkID("d", "h", 0); got != ChunkID("d", "h", 0) || len(got) != 16 {
		t.Errorf("ChunkID not stable or not 16 hex digits: %q", got)
	}
	base := ChunkID("d", "h", 0)
	for name, other := range map[string]string{
		"ordinal":        ChunkID("d", "h", 1),
		"heading path":   ChunkID("d", "h2", 0),
		"doc id":         ChunkID("e", "h", 0),
		"field boundary": ChunkID("dh", "", 0),
	} {
		if other == base {
			t.Errorf("changing the %s kept the id %s", name, base)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {"日本", 2}, {strings.Repeat("x", 4000), 1000}}
	for _, tt := range tests {
		if got := EstimateTokens(tt.in); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// checkChunks asserts what holds for any chunking: ordinals 0..n-1, no chunk
// over MaxTokens or blank, Tokens matching the body, and the chunks holding
// exactly the body's non-space text.
func checkChunks(t *testing.T, body string, opts ChunkOptions, chunks []Chunk) {
	t.Helper()
	maxTokens := opts.withDefaults().MaxTokens
	var joined strings.Builder
	for i, c := range chunks {
		if c.Ordinal != i {
			t.Errorf("chunk %d has Ordinal %d", i, c.Ordinal)
		}
		if c.Tokens != EstimateTokens(c.Body) {
			t.Errorf("chunk %d: Tokens %d, EstimateTokens(Body) %d", i, c.Tokens, EstimateTokens(c.Body))
		}
		if c.Tokens > maxTokens {
			t.Errorf("chunk %d has %d tokens, over the maximum %d", i, c.Tokens, maxTokens)
		}
		if strings.TrimSpace(c.Body) == "" {
			t.Errorf("chunk %d is blank", i)
		}
		joined.WriteString(c.Body)
	}
	if got, want := withoutSpace(joined.String()), withoutSpace(body); got != want {
		t.Errorf("chunks hold %q, body has %q", got, want)
	}
}

// checkNoteChunks asserts that a parsed note's Chunks are the chunks
// ChunkBody makes of its Body, and returns them.
func checkNoteChunks(t *testing.T, n Note, opts ChunkOptions) []Chunk {
	t.Helper()
	got := n.Chunks(opts)
	if diff := cmp.Diff(ChunkBody(n.Body, opts), got); diff != "" {
		t.Errorf("Note.Chunks differs from ChunkBody of its Body (-ChunkBody +Chunks):\n%s", diff)
	}
	return got
}

// withoutSpace drops the whitespace runes of s, keeping every other byte as
// it is, invalid UTF-8 included.
func withoutSpace(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
