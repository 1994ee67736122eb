package simd

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkQ4Q8 runs each kernel on the encoder's products for 512
// activation rows (two 256-token texts) on one goroutine, reporting
// GMAC/s: multiply-accumulates of weights by activations per second.
func BenchmarkQ4Q8(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 512
	for _, k := range q4q8Kernels {
		for _, shape := range [][2]int{{384, 384}, {1536, 384}, {384, 1536}} {
			rows, cols := shape[0], shape[1]
			b.Run(fmt.Sprintf("%s/%dx%d", k.name, rows, cols), func(b *testing.B) {
				w, err := PackQ4(randQ4(rng, rows, cols, false), rows, cols)
				if err != nil {
					b.Fatal(err)
				}
				var a Q8
				a.Reset(n, cols)
				a.QuantizeRows(randActs(rng, n, cols, false), 0, n)
				y := make([]float32, n*rows)
				bias := make([]float32, rows)
				for b.Loop() {
					matMul(k, y, rows, w, bias, &a, 0, rows/RowGroup)
				}
				b.ReportMetric(float64(b.N)*n*float64(rows*cols)/b.Elapsed().Seconds()/1e9, "GMAC/s")
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
