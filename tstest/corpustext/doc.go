// Package corpustext finds the LiveSync corpus dumps in ../shared/corpus for
// every test that reads them (Require: a skip without them, a failure with
// VAULTASK_REQUIRE_CORPUS=1), and reads texts back from them (help and hub,
// gzipped _all_docs with docs) for the built-in models' golden tests, whose
// golden files name each text by corpus, document id and kind rather than
// store it: the corpus is third-party. It checks the models' vectors too
// (CheckVectors against the golden ones, AtLeast, AtMost, CheckUnit),
// failing on zeros, NaN or a wrong length, which a cosine or a difference
// compared with a bound lets pass. It imports nothing from the module.
package corpustext
