// Package ragconfig turns config into the answering pipeline's settings, so
// every command and the benchmarks retrieve with the same sizes and weights.
// It may import config, index (read types) and rag.
package ragconfig
