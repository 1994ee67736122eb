// Package ragconfig turns config into the answering pipeline's settings, so
// every command and the benchmarks retrieve with the same sizes and weights.
// It is wiring, like cmd/vaultask, so it stands beside it above the
// packages it joins (pkgsite's cmd/internal/cmdconfig), not among the
// leaves of internal/ that they import. It is not under cmd/internal
// because devtools/bench, outside cmd/, measures retrieval with the same
// settings, and Go refuses an internal package to a package outside its
// parent. cmd/vaultask and devtools/bench import it.
//
// It may import config, llm (what is measured of each embedding model), rag
// and vault.
package ragconfig
