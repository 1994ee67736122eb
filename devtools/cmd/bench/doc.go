// Command bench runs vaultask's benchmarks and writes reports/BENCHMARKS.md,
// reports/bench/results.json and the charts in reports/bench/ (see devtools/bench):
//
//	go run -tags sqlite_fts5 ./devtools/cmd/bench -size full -out reports -models use-lite,e5
//
// It refuses a work tree with uncommitted changes unless given -dirty (the
// report then marks the run). With -readme FILE it runs nothing and
// rewrites FILE's targets table, between its bench:targets markers, from
// OUT/bench/results.json:
//
//	go run -tags sqlite_fts5 ./devtools/cmd/bench -readme README.md
//
// It is not part of the vaultask binary.
package main
