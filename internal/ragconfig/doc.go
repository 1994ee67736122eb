// Package ragconfig turns config into the answering pipeline's settings, so
// every command and the benchmarks retrieve with the same sizes and weights.
// It may import config, llm (what is measured of each embedding model), rag
// and vault.
package ragconfig
