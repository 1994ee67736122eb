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
		n.Chunks(DefaultChunkOptions())
	}
}

// BenchmarkHostile times what indexing one note costs, Parse and chunking,
// for each hostile input at three sizes. Before tooCostly kept them from
// goldmark, the quadratic ones took minutes at 1MB.
func BenchmarkHostile(b *testing.B) {
	for _, in := range hostileInputs {
		for _, size := range []int{10_000, 100_000, 1_000_000} {
			src := []byte(in.gen(size))
			b.Run(fmt.Sprintf("%s/%dKB", in.name, size/1000), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					n := Parse("Notes/Hostile.md", src, "sensitivity")
					n.Chunks(DefaultChunkOptions())
				}
			})
		}
	}
}
