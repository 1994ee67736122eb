package simd

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchTokens are the activation rows the products are benchmarked for:
// one 256-token text, and eight.
var benchTokens = []int{256, 2048}

// BenchmarkQ4Q8 runs each kernel on the encoder's products for
// benchTokens activation rows on one goroutine, reporting GMAC/s:
// multiply-accumulates of weights by activations per second.
func BenchmarkQ4Q8(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range q4q8Kernels {
		benchProducts(b, k.name, rng, func(b *testing.B, rows, cols int) func([]float32, []float32, *Q8) {
			w, err := PackQ4(randQ4(rng, rows, cols, false), rows, cols)
			if err != nil {
				b.Fatal(err)
			}
			return func(y, bias []float32, a *Q8) { matMul(k, y, rows, &w.packed, bias, a, 0, rows/RowGroup) }
		})
	}
}

// BenchmarkW8Q8 is BenchmarkQ4Q8 for the W8×Q8 kernels, on the same
// shapes (those of multilingual-e5-small and bge-small-en-v1.5).
func BenchmarkW8Q8(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range w8q8Kernels {
		benchProducts(b, k.name, rng, func(b *testing.B, rows, cols int) func([]float32, []float32, *Q8) {
			w, err := QuantizeW8(randW8(rng, rows, cols, false), rows, cols)
			if err != nil {
				b.Fatal(err)
			}
			return func(y, bias []float32, a *Q8) { matMul(k, y, rows, &w.packed, bias, a, 0, rows/RowGroup) }
		})
	}
}

// benchProducts runs the product that prepare makes for a rows×cols
// weight matrix at each shape and each of benchTokens.
func benchProducts(b *testing.B, kernel string, rng *rand.Rand,
	prepare func(b *testing.B, rows, cols int) func(y, bias []float32, a *Q8)) {
	for _, n := range benchTokens {
		for _, shape := range [][2]int{{384, 384}, {1536, 384}, {384, 1536}} {
			rows, cols := shape[0], shape[1]
			b.Run(fmt.Sprintf("%s/T%d/%dx%d", kernel, n, rows, cols), func(b *testing.B) {
				product := prepare(b, rows, cols)
				var a Q8
				a.Reset(n, cols)
				a.QuantizeRows(randActs(rng, n, cols, false), 0, n)
				y := make([]float32, n*rows)
				bias := make([]float32, rows)
				for b.Loop() {
					product(y, bias, &a)
				}
				b.ReportMetric(float64(b.N)*float64(n*rows*cols)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}

// BenchmarkQuantizeRows reports how fast activations are quantized, in
// values per second.
func BenchmarkQuantizeRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, cols = 512, 1536
	x := randActs(rng, n, cols, false)
	var a Q8
	for b.Loop() {
		a.Reset(n, cols)
		a.QuantizeRows(x, 0, n)
	}
	b.ReportMetric(float64(b.N)*n*cols/b.Elapsed().Seconds()/1e6, "Mvalues/s")
}
