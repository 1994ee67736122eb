package uselite

import (
	"context"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/internal/simd"
)

// prose is English note-like text for the benchmark (passages of the
// evaluation set the model was chosen with).
var prose = []string{
	"Account recovery steps: open the login page, choose 'forgot credentials' and follow the link sent to your email.",
	"Mash three ripe bananas, mix with flour, sugar, butter and an egg, then bake the loaf for an hour.",
	"Meeting notes: the team agreed to move from MySQL to Postgres in the next quarter.",
	"Influenza usually brings fever, chills, muscle aches, a sore throat and fatigue.",
	"Before travelling, water the houseplants deeply and group them together away from direct sun.",
	"Tokyo airfare deals: budget carriers sometimes sell tickets from Europe for under 500 euros.",
	"Worn brake pads scrape against the rotor and produce a metallic squeal or grind.",
	"Gift list for father: a good whisky, a fishing rod, or a book about history.",
	"Insomnia tips: keep a regular bedtime, avoid caffeine after noon and keep screens out of the bedroom.",
	"Q3 financial results: sales grew 12 percent to 4.1 million dollars.",
	"Practice chords like G, C and D every day and use a metronome to build rhythm.",
	"In Python you can build a new list with [x*2 for x in items if x > 0].",
	"Trail checklist: boots, rain jacket, water bottle, map, snacks and a first aid kit.",
	"A dripping tap usually needs a new washer or cartridge; shut off the water supply first.",
	"To present confidently, rehearse your talk, slow down and make eye contact with the audience.",
	"Rome grew from a republic into an empire under Augustus and fell in the west in 476 AD.",
	"Health guidelines suggest 150 minutes of moderate physical activity every seven days.",
	"Reading list: Dune, The Left Hand of Darkness and Hyperion are classic sci-fi novels.",
	"CrashLoopBackOff means the container exits repeatedly; check the logs and the liveness probe.",
	"Nighttime barking in puppies often comes from boredom or anxiety; more evening walks help.",
	"Supermarket budgeting: plan meals, buy store brands and avoid shopping when hungry.",
	"The landlord sent the rental contract extension; rent rises 3 percent from June.",
	"Use git reset --soft HEAD~1 to remove the latest commit but keep the changes staged.",
	"Album: pictures of Florence, the Amalfi coast and a gelato shop in Rome from our summer holiday.",
	"Obsidian vaults hold personal notes written in Markdown with links between pages, tags and front matter.",
	"The retrieval system splits each note into chunks of roughly two hundred tokens and stores an embedding vector for every chunk.",
}

// benchChunks returns n chunks of about 200 tokens, each a run of prose
// sentences starting at a different one.
func benchChunks(m *Model, n int) (chunks []string, tokens int) {
	for i := range n {
		var b strings.Builder
		for j := i; len(m.Tokenize(b.String())) < 195; j++ {
			b.WriteString(prose[j%len(prose)])
			b.WriteByte(' ')
		}
		chunks = append(chunks, b.String())
		tokens += len(m.Tokenize(b.String()))
	}
	return chunks, tokens
}

// BenchmarkEmbed embeds batches of 64 chunks of about 200 tokens (two
// windows each) with each kernel this CPU runs, on all GOMAXPROCS cores.
//
// Measured 2026-11-30 on the 2-core AMD EPYC (Zen 5) dev machine, which is
// shared, so the figures swing with its load (-count 3, chunks/s):
//
//	kernel          idle machine    one core busy elsewhere
//	avx512          189–192         96–100
//	avx2            103–107         56–58
//	go (pure Go)    –               3.6–3.9
//
// Candidates measured the same way (idle) with the same forward pass and
// then dropped: gonum blas32 Sgemm (pure Go + SSE) 16–21 chunks/s, OpenBLAS
// 0.3.21 sgemm through cgo (OPENBLAS_CORETYPE=Haswell) 88–90 chunks/s.
func BenchmarkEmbed(b *testing.B) {
	for _, kern := range simd.Kernels {
		b.Run("kernel="+kern.Name, func(b *testing.B) {
			m := mustModel(b, kern)
			chunks, tokens := benchChunks(m, 64)
			ctx := context.Background()
			for b.Loop() {
				if _, err := m.Embed(ctx, chunks); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(chunks)*b.N)/b.Elapsed().Seconds(), "chunks/s")
			b.ReportMetric(float64(tokens)/float64(len(chunks)), "tokens/chunk")
		})
	}
}
