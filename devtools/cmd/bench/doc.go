// Command bench runs vaultask's benchmarks and writes reports/BENCHMARKS.md,
// reports/bench/results.json and the charts in reports/bench/ (see devtools/bench):
//
//	go run -tags sqlite_fts5 ./devtools/cmd/bench -size full -out reports -models use-lite,e5
//
// It is not part of the vaultask binary.
package main
