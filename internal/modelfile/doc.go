// Package modelfile is what the built-in embedders (llm/uselite, llm/e5,
// llm/bge) share about their model files:
//
//   - the sums pinned for them: a checksums.txt in each model's package
//     (Sums), which the package embeds and the fetch (internal/modelfetch)
//     reads, so each sum is spelled once;
//   - the check of every file a model reads against its sum as the model
//     loads, so a damaged or foreign file is refused, never embedded with;
//   - a file whose large table stays on disk after the load (bge's and
//     e5's word embeddings: File): it is mapped only while the model
//     loads, then read a row at a time with pread. A file rewritten in
//     place under the running process (truncate, cp, an old fetch) can then
//     never fault it (SIGBUS, as a mapping would), and costs no resident
//     memory; a change is seen at the next call, which reads the rewritten
//     file only once it matches its sum again, and fails until it does.
//
// It imports nothing from this module.
package modelfile
