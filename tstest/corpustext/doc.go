// Package corpustext reads texts back from the LiveSync corpus dumps in
// ../shared/corpus (help and hub, gzipped _all_docs with docs) for the
// built-in models' golden tests (and compares their vectors with the golden
// ones: Cosine, CheckVectors), whose golden files name each text by
// corpus, document id and kind rather than store it: the corpus is
// third-party. It imports nothing from the module.
package corpustext
