// Package bench is vaultask's benchmark suite: the scenarios of issue 13
// (freshness, index throughput, retrieval latency, the embedder, time to
// first token, concurrency, footprint and the scale curve), measured beside
// a baseline in the same run where there is one, and the report they make
// (BENCHMARKS.md, bench/results.json and PNG charts). The built-in embedding
// models (USE-lite, bge and e5; -models picks) are measured in the same run: the sections a
// model costs run once per model, each model after the first compared with
// the first (Config.Models). A figure is repeated where that is cheap and
// shown as min / median / max (or percentiles, for a latency distribution);
// one that takes minutes, or is one count or size of a run, may have a
// single value, and the report says how many each has. devtools/cmd/bench
// runs it (`make bench`); TestBenchSmoke runs every scenario at a tiny size
// so that `go test ./...` keeps it working. Nothing here fails on a number.
//
// It is a harness, not part of the product: it drives the real vaultask
// binary as a child process (built with go build) against the
// CouchDB-compatible test server (tstest/couchtest), writes notes as
// LiveSync does (tstest/livesyncput), fakes the paid generation model
// (tstest/fakellm), and opens the index, the feed, the models and the
// pipeline in process where a scenario measures them alone. So it imports
// feed, which otherwise only cmd/vaultask does; nothing imports it but its
// command.
package bench
