package markdown

import (
	"fmt"
	"strings"
	"testing"
)

// syntheticNote is a ~20 KB note with the parts real notes have: frontmatter,
// nested headings, prose with links and tags, lists, tables and code.
func syntheticNote() []byte {
	var b strings.Builder
	b.WriteString("---\ntitle: Benchmark\naliases: [Bench, Perf]\ntags: [bench, perf/go]\nsensitivity: open\n---\n# Benchmark\n\n")
	for i := 0; b.Len() < 20_000; i++ {
		fmt.Fprintf(&b, "## Section %d\n\n", i)
		fmt.Fprintf(&b, "Intro to section %d with a [[Note %d]] link, an ![[image-%d.png]] embed and a #topic-%d tag. ", i, i, i, i%7)
		b.WriteString(strings.Repeat("Plain prose follows here to fill the paragraph with ordinary words. ", 6))
		b.WriteString("\n\n### Details\n\n")
		fmt.Fprintf(&b, "- item with [[Folder/Other %d#Heading|alias]]\n- item with `inline [[code]]`\n- [md link](Some%%20Note%%20%d.md)\n\n", i, i)
		b.WriteString("| a | b |\n|---|---|\n| [[Cell\\|x]] | #cell |\n\n")
		b.WriteString("```go\nfunc main() { fmt.Println(\"[[not a link]] #nottag\") }\n```\n\n")
	}
	return []byte(b.String())
}

func BenchmarkParseAndChunk(b *testing.B) {
	src := syntheticNote()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		n := Parse("Notes/Benchmark.md", src, "sensitivity")
		ChunkBody(n.Body, DefaultChunkOptions())
	}
}
