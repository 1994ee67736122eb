package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vaultask/vaultask/index"
)

func runStats(ctx context.Context, m *Main, args []string) error {
	fset, cfgPath := m.newFlagSet("stats", "stats [--json]")
	asJSON := fset.Bool("json", false, "print one JSON object (keys notes, chunks, vectors, embedding_backlog, …)")
	cfg, log, err := m.configure(fset, cfgPath, args)
	if err != nil {
		return err
	}
	opts, err := storeOptions(cfg, log)
	if err != nil {
		return err
	}
	store, err := openExisting(ctx, opts)
	if err != nil {
		return err
	}
	defer store.Close()
	st, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		return enc.Encode(st)
	}
	rows := []struct {
		k string
		v any
	}{
		{"index", cfg.Index.Path},
		{"notes", fmt.Sprintf("%d (%d open, %d personal)", st.Notes, st.OpenNotes, st.PersonalNotes)},
		{"chunks", fmt.Sprintf("%d (%d open, %d personal)", st.Chunks, st.OpenChunks, st.PersonalChunks)},
		{"vectors", fmt.Sprintf("%d (%s, %d dimensions)", st.Vectors, st.EmbeddingModel, st.EmbeddingDim)},
		{"embedding backlog", backlogText(st)},
		{"re-embedding", reembedding(st.Reembedding)},
		{"links", fmt.Sprintf("%d resolved, %d unresolved", st.LinksResolved, st.LinksUnresolved)},
		{"topic edges", st.TopicEdges},
		{"tag edges", st.TagEdges},
		{"not indexed", fmt.Sprintf("%d waiting for their chunks, %d incomplete, %d skipped", st.PendingNotes, st.IncompleteNotes, st.SkippedNotes)},
		{"schema version", st.SchemaVersion},
		{"last run", orNever(st.LastRun)},
		{"file size", fmt.Sprintf("%.1f MiB", float64(st.FileBytes)/(1<<20))},
	}
	for _, r := range rows {
		fmt.Fprintf(m.Stdout, "%-18s %v\n", r.k+":", r.v)
	}
	return nil
}

// backlogText is the backlog with its staged chunks: embedded, their
// vectors held until the rest of their note's are.
func backlogText(st index.Stats) string {
	if st.EmbeddingStaged == 0 {
		return fmt.Sprint(st.EmbeddingBacklog)
	}
	return fmt.Sprintf("%d (%d of them embedded, searchable once the rest of their notes are)", st.EmbeddingBacklog, st.EmbeddingStaged)
}

func orNever(s string) string {
	if s == "" {
		return "never"
	}
	return s
}

// reembedding says how far the index is into a new embedding space.
func reembedding(r *index.Reembedding) string {
	if r == nil {
		return "no"
	}
	return fmt.Sprintf("%d of %d chunks into %s (searches use the vectors above until done)", r.Embedded, r.Total, r.Model)
}
