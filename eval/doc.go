// Package eval measures retrieval on question files: it owns the files
// (parsing, groups, the check that every acceptable path is indexed), the
// ranking of each question's notes through rag.Pipeline.RankNotes,
// recall@k, MRR and in-context per A/B arm for every file, every group and
// the whole run, the A/B arms themselves (retrieval.* keys set through
// config.Set), the statistics that place web.thin_distance (five numbers,
// the best split, the overlap) on the very value rag.ThinStatistic gives the
// trigger, and the reports, as data for --json and as text.
//
// It may import rag, config and internal/clip (a question cut for a table
// cell). cmd/vaultask parses the flags, opens the
// config, the index and the pipelines, and prints the reports.
package eval
